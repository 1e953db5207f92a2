import Foundation
import XCTest

/// Hostile input to a session fed through a pipe.
final class ReplInputCLITests: XCTestCase {
    func testAnOverlongLineIsSkippedAndTheSessionGoesOn() throws {
        let cli = try CLIHarness(testCase: self)
        let long = "x = \"" + String(repeating: "a", count: 2 << 20) + "\""
        let r = try cli.run(["repl"], input: "1\n" + long + "\nx\n2\r\n")
        XCTAssertEqual(r.status, 0, String(r.output.prefix(2000)))
        XCTAssertEqual(r.stdout, "1\n2\n")
        let errors = r.stderrWithoutRunStart.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        XCTAssertEqual(errors, ["error: a line longer than 1 MiB was skipped",
                                "error: repl:1: recipe attempted to access nonexistent global 'x'"])
    }

    func testALimitEndsTheSessionAsItEndsARun() throws {
        let cli = try CLIHarness(testCase: self)
        let memory = try cli.run(["repl", "--quiet"], input: "big = {}\nfor i = 1, 1e9 do big[i] = i end\n1\n")
        XCTAssertEqual(memory.status, 4, memory.output)
        XCTAssertEqual(memory.stdout, "", "nothing runs after the limit")
        XCTAssertTrue(memory.stderr.contains("error: limit exceeded: memory (256 MiB)"), memory.stderr)
        let time = try cli.run(["repl", "--quiet", "--timeout", "0.5"], input: "while true do end\n1\n")
        XCTAssertEqual(time.status, 4, time.output)
        XCTAssertEqual(time.stdout, "")
        XCTAssertTrue(time.stderr.contains("error: limit exceeded: timeout (0.5 s)"), time.stderr)
    }

    func testAValueJSONCannotHoldIsAnErrorAndATableOfFunctionsShowsItsNames() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["repl", "--quiet"], input: "t = {}\nt.self = t\nt\n{ name = \"x\", greet = function() end }\nhub.users.get\n1\n")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "[\n  \"greet()\",\n  \"name\"\n]\n\"function: builtin\"\n1\n")
        XCTAssertEqual(r.stderrWithoutRunStart, "error: cannot show value 1 as JSON: table contains a cycle\n")
        let eval = try cli.run(["eval", "local t = {} t.t = t return 1, t"])
        XCTAssertEqual(eval.status, 1, eval.output)
        XCTAssertEqual(eval.stdout, "1\n")
        XCTAssertTrue(eval.stderr.hasPrefix("error: cannot show value 2 as JSON: table contains a cycle\n"), eval.stderr)
    }

    func testValuesAndErrorsCannotMoveTheTerminal() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["repl"], input: #""\27[2J", { ["\27]0;t\7"] = 1 }"# + "\n" + #"error("\27[31mred")"# + "\n")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "\"\\u001b[2J\"\n{\n  \"\\u001b]0;t\\u0007\": 1\n}\n")
        XCTAssertFalse(r.stderr.contains("\u{1B}"), r.stderr)
    }
}

/// What a session may send: with --apply each write is checked against the profile's
/// permissions, as a recipe's needs are; without it nothing is sent whatever they are.
final class ReplGateCLITests: XCTestCase {
    func testApplyRefusesAWriteTheProfileDoesNotHoldAndReadsStillWork() throws {
        let lab = try GateLab(testCase: self)
        defer { lab.server.stop() }
        let config = try lab.config("""
            reader = { hub_url = "URL", api_key = "\(GateCLITests.opsKey)", api_key_permissions = { "users.list" }, rate_limit_per_minute = 0 },
            unknown = { hub_url = "URL", api_key = "\(GateCLITests.opsKey)", rate_limit_per_minute = 0 },
            """)
        let suspend = #"hub.users.suspend("usr_ada", { reason = "x" }).status"#
        let before = try lab.adaState()
        for profile in ["reader", "unknown"] {
            let read = try lab.cli.run(["eval", #"hub.users.get("ada@example.com").status"#, "--config", config, "--profile", profile])
            XCTAssertEqual(read.status, 0, read.output)
            XCTAssertEqual(read.stdout, "\"active\"\n")
            let planned = try lab.cli.run(["eval", suspend, "--config", config, "--profile", profile])
            XCTAssertEqual(planned.status, 0, planned.output)
            XCTAssertEqual(planned.stdout, "\"suspended\"\n", "the planned write's predicted result")
        }
        let refused = try lab.cli.run(["eval", suspend, "--apply", "--config", config, "--profile", "reader"])
        XCTAssertEqual(refused.status, 1, refused.output)
        XCTAssertTrue(refused.stderr.contains("error: eval:1: capability_denied: hub.users.suspend needs 'users.manage', which profile 'reader' does not hold; nothing was sent. Use a profile that holds it, or leave out --apply to see the write planned\n"), refused.stderr)
        let unknown = try lab.cli.run(["repl", "--apply", "--config", config, "--profile", "unknown"], input: suspend + "\n1\n")
        XCTAssertEqual(unknown.status, 0, unknown.output)
        XCTAssertEqual(unknown.stdout, "1\n")
        XCTAssertTrue(unknown.stderr.contains("error: capabilities_unknown: profile 'unknown' uses an API key whose permissions hubscript does not know, so a session sends no write with it (hub.users.suspend needs 'users.manage'); nothing was sent."), unknown.stderr)
        let after = try lab.adaState()
        XCTAssertEqual(after.status, before.status)
        XCTAssertEqual(after.events, before.events)
    }
}

/// A session started in any folder: inside a pinned library's folder (where no file of
/// the session is), with `require` of the folder's modules and of named libraries.
final class ReplLibraryCLITests: XCTestCase {
    func testEvalInsideALibraryFolderRequiresItsModules() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("shared/ops/words.lua", "return { hello = function(who) return 'hello ' .. who end }\n")
        let config = try cli.file("hubscript.config.lua", #"return { libraries = { ops = "shared/ops" } }"#)
        XCTAssertEqual(try cli.run(["trust", "--config", config]).status, 0)
        let library = cli.root.appendingPathComponent("shared/ops")
        let here = try cli.run(["eval", #"require("words").hello("ada")"#, "--config", config], cwd: library)
        XCTAssertEqual(here.status, 0, here.output)
        XCTAssertEqual(here.stdout, "\"hello ada\"\n")
        let named = try cli.run(["eval", #"require("ops.words").hello("bob")"#, "--config", config], cwd: library)
        XCTAssertEqual(named.status, 0, named.output)
        XCTAssertEqual(named.stdout, "\"hello bob\"\n")
        let session = try cli.run(["repl", "--config", config], cwd: library, input: #"w = require("words")"# + "\nw.hello(\"cy\")\n")
        XCTAssertEqual(session.status, 0, session.output)
        XCTAssertEqual(session.stdout, "\"hello cy\"\n")
        XCTAssertEqual(try cli.run(["verify", "--config", config]).status, 0, "a session leaves no file in the library")
    }
}
