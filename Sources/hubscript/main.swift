print("hubscript")
