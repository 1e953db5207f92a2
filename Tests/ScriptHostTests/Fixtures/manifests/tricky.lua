#!/usr/bin/env hubscript
-- A leading comment with braces { and } that the locator must skip.
--[==[ a long comment ]] with { an unbalanced brace
     and a fake end ]=] ]==]
recipe { -- } a comment inside the manifest
  name = "tricky",
  description = "braces } { in a string, 'quotes' \" and \\",
  version = [[1.0 }]],
  params = {
    pattern = { type = "string", default = [=[a]]}{]=] },
    note = { type = "string", default = '}' },
  },
}
error("the body must not run when the manifest is read")
while true do end
