-- Calls with the wrong number of arguments.
recipe {
  name = "argument-count",
  needs = { "users.list" },
}

local user = hub.users.get()
print(user, time.days_ago(1, 2))
