-- A module function that does not exist, and a string function misspelt.
recipe {
  name = "unknown-field",
  needs = { "users.list" },
}

for user in hub.users.lst{ status = "active" } do
  print(string.fromat("%s", user.email))
end
