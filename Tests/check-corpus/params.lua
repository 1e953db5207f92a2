-- A parameter read under the wrong name, and one declared but never read.
recipe {
  name = "params",
  params = {
    days = { type = "number", default = 90 },
    dry  = { type = "boolean", default = false },
  },
}

print(time.days_ago(params.dayz))
