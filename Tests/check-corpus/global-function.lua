-- A helper defined as a global function: the run stops where it is defined.
recipe { name = "global-function" }

function greet(name)
  return "hello, " .. name
end
print(greet("Ada"))
