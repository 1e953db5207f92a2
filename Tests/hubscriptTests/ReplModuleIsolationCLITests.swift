import Foundation
import XCTest

/// The `repl` module a session's driver reads lines with and shows values with is the
/// driver's alone: a line, or a module it requires (library code), can reach the module
/// as a global but cannot call it, so it cannot show a forged prompt, read the line the
/// person types next, show forged values or stop the session.
final class ReplModuleIsolationCLITests: XCTestCase {
    func testALineOrARequiredModuleCannotUseTheSessionsOwnModule() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("lure.lua", #"return { ask = function() return repl.read("\27[2Jpassword: ") end }"# + "\n")
        let input = """
            lure = require("lure")
            lure.ask()
            2
            repl.claim()
            repl.show("forged")
            repl.fail("forged")
            repl.stop("forged")
            1

            """
        let r = try cli.run(["repl", "--quiet"], input: input)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "2\n1\n", "the line after the lure's call is the person's, run as typed")
        XCTAssertEqual(r.stderrWithoutRunStart, """
            error: lure.lua:1: repl.read: the session's module is hubscript's own; a line cannot use it
            error: repl:1: repl.claim: the session's module is hubscript's own; a line cannot use it
            error: repl:1: repl.show: the session's module is hubscript's own; a line cannot use it
            error: repl:1: repl.fail: the session's module is hubscript's own; a line cannot use it
            error: repl:1: repl.stop: the session's module is hubscript's own; a line cannot use it

            """)
        let eval = try cli.run(["eval", #"repl.show("forged")"#])
        XCTAssertEqual(eval.status, 1, eval.output)
        XCTAssertEqual(eval.stdout, "")
        XCTAssertTrue(eval.stderr.hasPrefix("error: eval:1: repl.show: the session's module is hubscript's own; a line cannot use it\n"), eval.stderr)
    }
}

/// Values a line hands the session's driver run none of the line's code in the driver:
/// an error value whose __tostring fails, a table whose __pairs fails, or one that
/// poses as a hub list and fails when read, is shown or reported and the session goes on.
final class ReplHostileValuesCLITests: XCTestCase {
    func testAnErrorValueOrATableWithFailingMetamethodsDoesNotEndTheSession() throws {
        let cli = try CLIHarness(testCase: self)
        let input = """
            error(setmetatable({}, { __tostring = function() error("no") end }))
            setmetatable({ f = print }, { __pairs = function() error("no") end })
            setmetatable({}, { __name = "hub.list", __call = function() error("not a list") end })
            1

            """
        let r = try cli.run(["repl", "--quiet"], input: input)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "[\n  \"f()\"\n]\n1\n")
        XCTAssertEqual(r.stderrWithoutRunStart, "error: (an error value that cannot be shown as text)\nerror: repl:1: not a list\n")
    }
}
