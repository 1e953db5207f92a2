-- Only warnings: an unused local. The recipe runs, and check exits 0.
recipe { name = "unused-local" }

local unused = 42
local _meant = 1
print("hello")
