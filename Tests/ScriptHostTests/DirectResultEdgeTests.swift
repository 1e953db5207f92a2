import Foundation
import XCTest
import ScriptHost

/// Hostile recipes against direct scalar results (HS_DIRECT_RESULT): a scalar returned
/// from a finalizer that runs while another binding's table is pushed, inside error
/// handlers, coroutines, at the Lua and C stack limits, and as a limit hits.
final class DirectResultEdgeTests: RecipeTestCase {
    private func plugin(sleepSeconds: Double = 0) -> Plugin {
        Plugin(module: "s", functions: [
            ScriptFunction("int") { call in .value(.integer(try call.integer(1))) },
            ScriptFunction("num") { call in .value(.number(try call.number(1))) },
            ScriptFunction("yes") { _ in .value(.bool(true)) },
            ScriptFunction("none") { _ in .value(.nilValue) },
            ScriptFunction("slow") { _ in
                Thread.sleep(forTimeInterval: sleepSeconds)
                return .value(.integer(7))
            },
            ScriptFunction("stop") { _ in throw ScriptLimitError("limit exceeded: the host stopped this run") },
        ])
    }

    /// Finalizers calling scalar bindings while json.decode pushes 2000-item tables: each
    /// scalar is its own call's, and the outer table is intact.
    func testScalarsFromFinalizersDuringLargePushesAreTheirOwn() {
        harness.limits.timeoutSeconds = 60
        harness.plugins.append(plugin())
        let outcome = harness.run(#"""
        local calls, wrong = 0, 0
        local mt = {}
        mt.__gc = function(o)
          calls = calls + 1
          local n = o.n
          if s.int(n) ~= n or math.type(s.int(n)) ~= "integer" or s.num(n + 0.5) ~= n + 0.5
             or s.yes() ~= true or select('#', s.none()) ~= 1 then wrong = wrong + 1 end
          setmetatable({ n = n + 1 }, mt)
        end
        for i = 1, 50 do setmetatable({ n = i }, mt) end
        local big = {}
        for i = 1, 2000 do big[i] = { id = "item" .. i, n = i } end
        local text = json.encode(big)
        for round = 1, 20 do
          local v = json.decode(text)
          for i = 1, 2000 do assert(v[i].id == "item" .. i and v[i].n == i, "item " .. i) end
        end
        print(calls >= 500 and "many" or ("only " .. calls), wrong)
        """#)
        XCTAssertNil(outcome.failure, outcome.message)
        XCTAssertEqual(outcome.lines, ["many\t0"])
    }

    func testScalarsInsideErrorHandlersAndPcall() {
        harness.plugins.append(plugin())
        XCTAssertEqual(lines("""
            print(xpcall(function() error("x") end, function(m) return s.int(5) end))
            print(xpcall(function() error({}) end, function(m) return s.num(1.5), s.none() end))
            print(pcall(s.int, 2^63))
            print(select(2, pcall(s.int, 2^53)), math.type(select(2, pcall(s.int, 3.0))))
            print(select('#', pcall(s.none)), pcall(s.yes))
            local co = coroutine.create(function() return s.int(coroutine.yield(s.num(0.25))) end)
            print(coroutine.resume(co)) print(coroutine.resume(co, 9)) print(coroutine.resume(co))
            """), [
                "false\t5",
                "false\t1.5",
                "false\tbad argument #1 to 's.int' (number has no integer representation)",
                "9007199254740992\tinteger",
                "2\ttrue\ttrue",
                "true\t0.25", "true\t9", "false\tcannot resume dead coroutine",
            ])
    }

    /// Near Lua's stack limit and the C stack limit, a scalar still arrives (it needs one
    /// slot of the LUA_MINSTACK a C function has) and the overflow is Lua's own error.
    func testScalarsAtTheStackLimits() {
        harness.limits.memoryBytes = 256 << 20
        harness.plugins.append(plugin())
        let outcome = harness.run("""
            local function deep(n) if n == 0 then return s.int(1) end return s.int(deep(n - 1)) + 0 end
            local ok, err = pcall(deep, 1e7)
            print(ok, (tostring(err):gsub("^.-:%d+: ", "")))
            print(deep(150000))
            local depth = 0
            local function cdeep() depth = depth + 1; return s.int(select(2, pcall(cdeep)) and 1 or 1) end
            print(pcall(cdeep))
            print(depth > 100, s.int(3), s.yes())
            """)
        XCTAssertNil(outcome.failure, outcome.message)
        XCTAssertEqual(outcome.lines, ["false\tstack overflow", "1", "true\t1", "true\t3\ttrue"])
    }

    func testAScalarCallInALoopStopsAtTheInstructionLimit() {
        harness.limits.instructions = 100_000
        harness.plugins.append(plugin())
        assertFails("local x = 0 while true do x = s.int(x + 1) end", kind: .limit(.instructions),
                    message: LimitMessages.instructions(100_000))
        assertFails("local x = 0 while true do pcall(function() x = s.int(x + 1) end) end", kind: .limit(.instructions),
                    message: LimitMessages.instructions(100_000))
        assertFreshRunWorks()
    }

    func testAScalarCallAfterTheMemoryLimitIsRefusedUnderPcall() {
        harness.plugins.append(plugin())
        let outcome = harness.run("""
            local t = {}
            print(pcall(function() while true do t[#t + 1] = string.rep("x", 1024) .. #t end end))
            print("after", s.int(1))
            """)
        XCTAssertEqual(outcome.failure?.kind, .limit(.memory), outcome.message)
        XCTAssertEqual(outcome.message, LimitMessages.memory32)
        XCTAssertEqual(outcome.lines, [])
    }

    /// A host stop (ScriptLimitError) swallowed by pcall: the next scalar call raises
    /// the stop again instead of returning.
    func testAScalarCallAfterAHostStopRaisesItAgain() {
        harness.plugins.append(plugin())
        let outcome = harness.run("""
            print(pcall(s.stop))
            print("after", s.int(1))
            """)
        XCTAssertEqual(outcome.failure?.kind, .limit(.host), outcome.message)
        XCTAssertEqual(outcome.message, "limit exceeded: the host stopped this run")
        XCTAssertEqual(outcome.lines, [])
    }

    /// The deadline passes while a binding runs; it returns a scalar: the hook is armed
    /// (hs_arm in the direct path), so the recipe stops at its next instruction.
    func testTheDeadlinePassingDuringAScalarBindingStopsAtTheNextInstruction() {
        harness.limits.timeoutSeconds = 0.3
        harness.plugins.append(plugin(sleepSeconds: 0.6))
        guard let outcome = runWithin(seconds: 10, """
            local x = s.slow()
            print("after", x)
            """) else { return }
        XCTAssertEqual(outcome.failure?.kind, .limit(.timeout), outcome.message)
        XCTAssertEqual(outcome.message, LimitMessages.timeout("0.3 s"))
        XCTAssertEqual(outcome.lines, [])
    }
}
