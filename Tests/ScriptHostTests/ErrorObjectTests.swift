import Foundation
import XCTest
import ScriptHost

/// An error object that cannot be converted is described as what it
/// is, and the failed conversion leaves nothing behind on the Lua stack.
final class ErrorObjectTests: RecipeTestCase {
    func testAnErrorTableWithACycleSaysSo() {
        assertFails("local t = {} t.self = t error(t)", kind: .runtime,
                    message: "error object: a table that cannot be shown as JSON (table contains a cycle)")
    }

    func testAnErrorTableWithAFunctionSaysWhy() {
        assertFails("error({ callback = print })", kind: .runtime,
                    message: "error object: a table that cannot be shown as JSON (cannot convert a function value)")
    }

    func testFailedConversionsInsidePcallLeaveTheStackAlone() {
        XCTAssertEqual(lines(#"""
        local bad = { a = { b = { c = print } } }
        for i = 1, 20000 do assert(not pcall(json.encode, bad)) end
        print(json.encode({ ok = true }), select("#", pcall(json.encode, bad)))
        """#), ["{\"ok\":true}\t2"])
    }
}
