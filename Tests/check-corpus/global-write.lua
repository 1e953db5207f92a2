-- A counter kept in a global: the run stops at the first assignment.
recipe {
  name = "global-write",
  needs = { "users.list" },
}

count = 0
for _ in hub.users.list{ status = "active" } do
  count = count + 1
end
print(count)
