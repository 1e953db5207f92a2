-- The smallest recipe: a manifest, a parameter, and some output.
recipe {
  name = "hello",
  version = "1.0.0",
  description = "Greets someone; shows params, log and json.",
  params = {
    name = { type = "string", default = "world", description = "who to greet" },
    times = { type = "integer", default = 1 },
  },
}

for _ = 1, params.times do
  print(("hello, %s!"):format(params.name))
end
log.info("greeted", { name = params.name, times = params.times })
print(json.encode({ greeted = params.name, times = params.times }))
