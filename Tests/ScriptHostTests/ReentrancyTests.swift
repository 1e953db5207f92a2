import Foundation
import XCTest
import ScriptHost

/// A binding called from a `__gc` finalizer while C pushes an earlier
/// binding's results. Each call level owns its result buffer (docs/architecture.md),
/// so the nested call can neither corrupt nor free the outer call's results.
final class ReentrancyTests: RecipeTestCase {
    /// A finalizer that calls `json.decode`/`json.encode` and re-arms itself, so one is
    /// always pending while large results are pushed.
    private static let finalizerPrelude = #"""
    local calls = 0
    local mt = {}
    mt.__gc = function()
      calls = calls + 1
      local x = json.decode('{"a":[1,2,3],"b":"' .. string.rep("xyz", 40) .. '"}')
      assert(#json.encode(x) > 100)
      setmetatable({}, mt)
    end
    for i = 1, 50 do setmetatable({}, mt) end

    """#

    func testThousandsOfFinalizersCallingBindingsDuringLargePushesLeaveResultsIntact() {
        harness.limits.timeoutSeconds = 60
        let source = Self.finalizerPrelude + #"""
        local big = {}
        for i = 1, 2000 do big[i] = { id = "item" .. i, n = i, tags = json.array({"a", "b"}) } end
        local text = json.encode(big)
        for round = 1, 30 do
          local v = json.decode(text)
          assert(#v == 2000, "count " .. #v)
          for i = 1, 2000 do
            local item = v[i]
            assert(item.id == "item" .. i and item.n == i and item.tags[2] == "b", "item " .. i .. " differs")
          end
          assert(json.encode(v) == text, "round " .. round .. ": re-encoding differs")
        end
        print(calls >= 1000 and "ok" or ("only " .. calls .. " finalizer calls"))
        """#
        let outcome = harness.run(source)
        XCTAssertNil(outcome.failure, outcome.message)
        XCTAssertEqual(outcome.lines, ["ok"])
    }

    func testBindingsAreRefusedInFinalizersAfterTheRecipeEnded() {
        // lua_close runs the last finalizers; they may call no binding (the run is over).
        let outcome = harness.run(#"""
        setmetatable({}, { __gc = function() print("finalizer printed after the end") end })
        print("body done")
        """#)
        XCTAssertNil(outcome.failure, outcome.message)
        XCTAssertEqual(outcome.lines, ["body done"])
    }

    func testAFreshRunWorksAfterFinalizerStress() {
        _ = harness.run(Self.finalizerPrelude + "for i = 1, 200 do json.decode('[1,2,3]') end")
        assertFreshRunWorks()
    }
}
