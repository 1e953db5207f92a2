import Foundation
import XCTest

/// `hubscript eval` and `hubscript repl` against the sandbox: values printed as JSON,
/// reads live, writes planned and shown (nothing sent) unless --apply, errors reported
/// with run's exit codes, and a repl session driven through a pipe.
final class ReplCLITests: XCTestCase {
    func status(of user: String, _ cli: CLIHarness) throws -> String? {
        try cli.sandbox().get("/users/\(user)").string("status")
    }

    func testEvalPrintsAValueAsIndentedJSON() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["eval", #"{ name = "ada", roles = json.array{ "member", "admin" }, n = 2, ok = true, none = json.null }"#])
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, """
            {
              "n": 2,
              "name": "ada",
              "none": null,
              "ok": true,
              "roles": [
                "member",
                "admin"
              ]
            }

            """)
        XCTAssertEqual(r.stderrWithoutRunStart, "")
        let several = try cli.run(["eval", #"1, "two", {}"#])
        XCTAssertEqual(several.stdout, "1\n\"two\"\n{}\n")
        let statement = try cli.run(["eval", "for i = 1, 3 do print(i) end"])
        XCTAssertEqual(statement.stdout, "1\n2\n3\n", "a statement prints what it prints, nothing else")
    }

    func testEvalPrintsAUserFromTheHub() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["eval", #"hub.users.get("ada@example.com")"#])
        XCTAssertEqual(r.status, 0, r.output)
        let printed = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? NSDictionary)
        let expected = try cli.sandbox().get("/users/usr_ada") as NSDictionary
        XCTAssertEqual(printed["email"] as? String, "ada@example.com")
        XCTAssertEqual(printed["id"] as? String, "usr_ada")
        XCTAssertEqual(printed["status"] as? String, expected["status"] as? String)
        XCTAssertTrue(r.stdout.hasPrefix("{\n  \""), r.stdout)
        let field = try cli.run(["eval", #"hub.users.get("ada@example.com").email"#])
        XCTAssertEqual(field.stdout, "\"ada@example.com\"\n")
        let runs = try cli.run(["runs", "list"])
        XCTAssertTrue(runs.stdout.hasSuffix("  (eval)\n"), "a session is journalled as a run of (eval): \(runs.stdout)")
    }

    func testEvalShowsALazyListUpToItsBoundAndSaysWhenItIsCut() throws {
        let cli = try CLIHarness(testCase: self)
        let cut = try cli.run(["eval", "hub.users.list{}", "--max-items", "2"])
        XCTAssertEqual(cut.status, 0, cut.output)
        let items = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(cut.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(items.count, 2)
        XCTAssertTrue(cut.stderr.contains("(the first 2 items; the list has more: a for loop or :collect() reads them all, --max-items shows more)\n"), cut.stderr)

        let whole = try cli.run(["eval", #"hub.users.list{ email = "ada@example.com" }"#])
        XCTAssertEqual(whole.status, 0, whole.output)
        let one = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(whole.stdout.utf8)) as? [[String: Any]])
        XCTAssertEqual(one.map { $0["id"] as? String }, ["usr_ada"])
        XCTAssertFalse(whole.stderr.contains("the list has more"), whole.stderr)

        let none = try cli.run(["eval", #"hub.users.list{ email = "nobody@example.com" }"#])
        XCTAssertEqual(none.stdout, "[]\n")
    }

    func testAWriteUnderEvalIsPlannedAndNotSent() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        XCTAssertEqual(try status(of: "usr_ada", cli), "active")
        let r = try cli.run(["eval", #"hub.users.suspend("usr_ada", { reason = "looking" }).status"#])
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.stderr.contains("POST"), r.stderr)
        XCTAssertTrue(r.stderr.contains("/users/usr_ada/suspend"), r.stderr)
        XCTAssertTrue(r.stderr.contains("1 write planned, 0 reads; nothing was sent.\nto send them, run the same hubscript eval with --apply\n"), r.stderr)
        XCTAssertEqual(try status(of: "usr_ada", cli), "active", "a planned write must not reach the Hub")
    }

    func testEvalWithApplySendsTheWrite() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let r = try cli.run(["eval", #"hub.users.suspend("usr_ada", { reason = "leaver" }).status"#, "--apply"])
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "\"suspended\"\n")
        XCTAssertFalse(r.stderr.contains("nothing was sent"), r.stderr)
        XCTAssertFalse(r.stderr.contains("to send them"), r.stderr)
        XCTAssertEqual(try status(of: "usr_ada", cli), "suspended")
    }

    func testEvalErrorsReadAsErrorsWithRunsExitCodes() throws {
        let cli = try CLIHarness(testCase: self)
        let unknown = try cli.run(["eval", "hub.users.lst{}"])
        XCTAssertEqual(unknown.status, 1, unknown.output)
        XCTAssertEqual(unknown.stdout, "")
        XCTAssertTrue(unknown.stderr.contains("eval:1: attempt to call a nil value (field 'lst')"), unknown.stderr)

        // A chunk that does not compile is refused before anything runs: exit 2, as run.
        let syntax = try cli.run(["eval", "local x = = 1"])
        XCTAssertEqual(syntax.status, 2, syntax.output)
        XCTAssertEqual(syntax.stderr, "error: eval:1: unexpected symbol near '='\n")
        let unfinished = try cli.run(["eval", "if true then\nprint(1)"])
        XCTAssertEqual(unfinished.status, 2, unfinished.output)
        XCTAssertEqual(unfinished.stderr, "error: eval:2: 'end' expected (to close 'if' at line 1) near <eof>\n")

        let global = try cli.run(["eval", "nosuchname"])
        XCTAssertEqual(global.status, 1, global.output)
        XCTAssertTrue(global.stderr.contains("eval:1: recipe attempted to access nonexistent global 'nosuchname'"), global.stderr)

        let usage = try cli.run(["eval"])
        XCTAssertEqual(usage.status, 2, usage.output)
        XCTAssertTrue(usage.stderr.contains("expected an expression"), usage.stderr)
        XCTAssertEqual(try cli.run(["eval", "1", "--max-items", "0"]).status, 2)

        let limit = try cli.run(["eval", "while true do end", "--timeout", "0.5"])
        XCTAssertEqual(limit.status, 4, limit.output)
        XCTAssertTrue(limit.stderr.contains("limit exceeded: timeout"), limit.stderr)
    }

    func testEvalJSONWritesAValueEvent() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["eval", #"{ a = 1 }, "x""#, "--json"])
        XCTAssertEqual(r.status, 0, r.output)
        let events = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        let values = events.filter { $0["type"] as? String == "value" }
        XCTAssertEqual(values.count, 2, r.stdout)
        XCTAssertEqual((values.first?["value"] as? [String: Any])?["a"] as? Int, 1)
        XCTAssertEqual(values.last?["value"] as? String, "x")
        XCTAssertEqual(events.last?["type"] as? String, "summary", r.stdout)
    }

    func testReplThroughAPipeKeepsStateAcrossLinesAndSurvivesErrors() throws {
        let cli = try CLIHarness(testCase: self)
        let input = """
            x = 21
            x * 2
            local y = 5
            y
            for i = 1, 2 do
              print(i)
            end
            error("boom")
            hub.users.lst{}
            function double(n) return n * 2 end
            double(x)
            "end"

            """
        let r = try cli.run(["repl"], input: input)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertFalse(r.stderr.contains("hubscript repl: reads are live"), "no greeting from a pipe")
        XCTAssertEqual(r.stdout, "42\n1\n2\n42\n\"end\"\n", "`local y` lasts for its line; y is then an unknown global")
        let errors = r.stderrWithoutRunStart.split(separator: "\n").filter { $0.hasPrefix("error: ") }
        XCTAssertEqual(errors, [
            "error: repl:1: recipe attempted to access nonexistent global 'y'",
            "error: repl:1: boom",
            "error: repl:1: attempt to call a nil value (field 'lst')",
        ])
    }

    func testReplPlansWritesAndShowsThem() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let r = try cli.run(["repl"], input: #"hub.users.suspend("usr_ada", { reason = "x" }).status"# + "\n")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.stderr.contains("planned, not sent: POST /users/usr_ada/suspend — "), r.stderr)
        XCTAssertEqual(try status(of: "usr_ada", cli), "active")

        let applied = try cli.run(["repl", "--apply"], input: #"hub.users.suspend("usr_ada", { reason = "x" }).status"# + "\n")
        XCTAssertEqual(applied.status, 0, applied.output)
        XCTAssertTrue(applied.stderr.contains("sent: POST /users/usr_ada/suspend — "), applied.stderr)
        XCTAssertEqual(applied.stdout, "\"suspended\"\n")
        XCTAssertEqual(try status(of: "usr_ada", cli), "suspended")
    }

    func testReplCommandsAndTheEndOfTheSession() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["repl"], input: ":help\n:aply\n:apply\n1\n:quit\n2\n")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.stdout.contains(":quit    end the session (also Ctrl-D)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("writes are planned and shown, never sent"), r.stdout)
        XCTAssertTrue(r.stdout.hasSuffix("1\n"), "nothing after :quit runs: \(r.stdout)")
        XCTAssertTrue(r.stderr.contains("error: unknown command ':aply' (did you mean ':apply'?); :help lists the commands"), r.stderr)
    }

    func testReplContinuesAnUnfinishedChunkAndReportsOneLeftUnfinished() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["repl"], input: "t = {\n  a = 1,\n}\nt.a\nif true then\n")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "1\n")
        XCTAssertTrue(r.stderr.contains("error: repl:1: 'end' expected near <eof>"), r.stderr)
    }
}
