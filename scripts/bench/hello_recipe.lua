recipe { name = "hello-bench" }
print("hello, world!")
