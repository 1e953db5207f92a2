-- A field added to a shared library table.
recipe { name = "field-write" }

string.shout = function(s) return s:upper() .. "!" end
print(string.shout("hi"))
