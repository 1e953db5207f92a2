-- 1M calls of math.abs and of bench.echo from the same loop shape; prints seconds each.
-- Runs only under hubscript with HUBSCRIPT_BENCH_PLUGIN=1 (manifest first).
recipe { name = "bench-calls" }
local abs, echo, clock = math.abs, bench.echo, os.clock
local N = 1000000
local function run(f)
  local t0 = clock()
  local s = 0
  for i = 1, N do s = s + f(i) end
  return clock() - t0
end
run(abs); run(echo) -- warm up
local a, b = run(abs), run(echo)
print(string.format("%.6f %.6f", a, b))
