-- 1M calls of math.abs and of bench.echo from the same loop shape; prints seconds each.
-- Runs under `hubscript-bench calls` (hubscript's runtime with the `bench` module). The two
-- alternate in slices of 50 000 calls, so a change in the machine's speed during the
-- run (frequent on a shared host) falls on both alike.
recipe { name = "bench-calls" }
local abs, echo, clock = math.abs, bench.echo, os.clock
local N, SLICE = 1000000, 50000
local function run(f, n)
  local t0 = clock()
  local s = 0
  for i = 1, n do s = s + f(i) end
  return clock() - t0
end
run(abs, SLICE); run(echo, SLICE) -- warm up
local a, b = 0, 0
for _ = 1, N // SLICE do
  a = a + run(abs, SLICE)
  b = b + run(echo, SLICE)
end
print(string.format("%.6f %.6f", a, b))
