-- A module that is in no folder require searches.
recipe { name = "missing-module" }

local nope = require("lib.nope")
print(nope)
