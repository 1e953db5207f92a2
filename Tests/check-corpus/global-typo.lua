-- Misspelt names: a base function and a local.
recipe { name = "global-typo" }

local total = 3
prnt("starting")
print(totl)
