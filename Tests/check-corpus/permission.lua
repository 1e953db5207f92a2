-- A write whose permission the manifest does not declare: the run would stop at the
-- suspension, after it has listed users.
recipe {
  name = "permission",
  needs = { "users.list" },
}

for user in hub.users.list{ status = "active" } do
  if user.last_login_at == nil then
    hub.users.suspend(user.id, { reason = "never signed in" })
  end
end
