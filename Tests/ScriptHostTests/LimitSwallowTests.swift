import Foundation
import XCTest
import ScriptHost

/// After any limit, no recipe code does work any more — not in a
/// `__close` handler run while a stopped coroutine unwinds, not in a binding called
/// from a finalizer or a handler.
final class LimitSwallowTests: RecipeTestCase {
    func testCloseHandlerOfAWrappedCoroutineDoesNotRunAfterAnInstructionLimit() {
        harness.limits.instructions = 1_000_000
        let outcome = assertFails(#"""
        local f = coroutine.wrap(function()
          local guard <close> = setmetatable({}, { __close = function()
            local n = 0
            for i = 1, 5e7 do n = n + 1 end
            print("close handler ran " .. n .. " iterations")
          end })
          while true do end
        end)
        f()
        """#, kind: .limit(.instructions), message: LimitMessages.instructions(1_000_000))
        XCTAssertEqual(outcome.lines, [])
    }

    func testCloseHandlerOfAWrappedCoroutineCannotSwallowTheMemoryLimit() {
        let outcome = assertFails(#"""
        local f = coroutine.wrap(function()
          local guard <close> = setmetatable({}, { __close = function()
            for attempt = 1, 5 do
              local ok = pcall(function() local t = {} for i = 1, 1e7 do t[i] = {} end end)
              print("caught the memory error, attempt " .. attempt, ok)
            end
          end })
          local t = {}
          while true do t[#t + 1] = string.rep("x", 1000) .. #t end
        end)
        f()
        """#, kind: .limit(.memory), message: LimitMessages.memory32)
        XCTAssertEqual(outcome.lines, [])
    }

    func testBindingsCalledFromAFinalizerAfterAMemoryLimitAreRefused() {
        let outcome = assertFails(#"""
        local keep = setmetatable({}, { __gc = function()
          for i = 1, 5 do print("finalizer still calling bindings " .. i) end
        end })
        local t = {}
        while true do t[#t + 1] = string.rep("x", 1000) .. #t end
        """#, kind: .limit(.memory), message: LimitMessages.memory32)
        XCTAssertEqual(outcome.lines, [])
    }

    func testCoroutineCloseLetsTheDeadlineReachTheHandlersItRuns() {
        // Without the fix the handler spins forever (only the CLI's watchdog ends it).
        harness.limits.timeoutSeconds = 0.5
        let outcome = runWithin(seconds: 30, #"""
        local co = coroutine.create(function()
          local guard <close> = setmetatable({}, { __close = function()
            while true do end
          end })
          coroutine.yield()
        end)
        coroutine.resume(co)
        coroutine.close(co)
        print("after close")
        """#)
        XCTAssertEqual(outcome?.failure?.kind, .limit(.timeout))
        XCTAssertEqual(outcome?.lines, [])
    }

    func testWrappedCoroutinesStillBehaveLikeLuas() {
        XCTAssertEqual(lines(#"""
        local gen = coroutine.wrap(function(a) local b = coroutine.yield(a + 1) coroutine.yield(b * 2) return "end" end)
        print(gen(1), gen(10), gen(), select("#", gen ~= nil))
        local bad = coroutine.wrap(function() error("boom") end)
        print(pcall(bad))
        local tbl = coroutine.wrap(function() error({ code = "x" }) end)
        local ok, e = pcall(tbl)
        print(ok, type(e), e.code)
        local closed = {}
        local f = coroutine.wrap(function()
          local g <close> = setmetatable({}, { __close = function() closed[#closed + 1] = "closed" end })
          error("after guard")
        end)
        print(pcall(f))
        print(closed[1])
        local dead = coroutine.wrap(function() end)
        dead()
        print(pcall(dead))
        """#), [
            "2\t20\tend\t1",
            "false\trecipes/t.lua:3: boom",
            "false\ttable\tx",
            "false\trecipes/t.lua:11: after guard",
            "closed",
            "false\tcannot resume dead coroutine",
        ])
    }
}
