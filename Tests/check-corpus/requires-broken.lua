-- The recipe is fine; the module it requires writes a global.
recipe { name = "requires-broken" }

local broken = require("lib.broken")
print(broken.answer())
