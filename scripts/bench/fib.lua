-- fib(32), timed inside the interpreter (os.clock), so start-up is not counted.
local function fib(n) if n < 2 then return n end return fib(n - 1) + fib(n - 2) end
local t0 = os.clock()
local r = fib(32)
print(string.format("%d %.6f", r, os.clock() - t0))
