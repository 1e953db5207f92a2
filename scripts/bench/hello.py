print("hello, world!")
