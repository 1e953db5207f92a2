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
        XCTAssertEqual(r.stderr, "")
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

/// `hubscript repl` on a terminal (a pseudo-terminal driven by python3's pty): line
/// editing, Tab completion, the history (up arrow, and the file kept 0600), Ctrl-D.
final class ReplTerminalTests: XCTestCase {
    /// Types each step's keys once a fresh prompt is shown, then Ctrl-D; prints the screen.
    static let driver = #"""
    import os, pty, sys, time, select
    steps = [s.encode().decode("unicode_escape").encode("latin-1") for s in sys.argv[1].split("\x1f")]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.argv[2], sys.argv[2:])
    screen = b""
    def wait_for(tokens, start):
        global screen
        deadline = time.time() + 60
        while not any(token in screen[start:] for token in tokens):
            if time.time() > deadline: return False
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                try: data = os.read(fd, 4096)
                except OSError: return False
                if not data: return False
                screen += data
        return True
    # A fresh prompt (or a continuation prompt) follows a newline; a redraw of the line
    # being typed does not.
    mark, tokens = 0, [b"\r> "]
    for keys in steps + [b"\x04"]:
        if not wait_for(tokens, mark): break
        tokens = [b"\n\r> ", b"\n\r>> "]
        mark = len(screen)
        os.write(fd, keys)
    while True:
        ready, _, _ = select.select([fd], [], [], 30)
        if not ready: break
        try: data = os.read(fd, 4096)
        except OSError: break
        if not data: break
        screen += data
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(screen.decode("utf-8", "replace"))
    sys.exit(os.waitstatus_to_exitcode(status))
    """#

    func testEditingCompletionAndHistoryOnATerminal() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3") }
        let cli = try CLIHarness(testCase: self)
        let history = cli.stateDir.appendingPathComponent("repl/history")
        try FileManager.default.createDirectory(at: history.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("earlier = 1\n".utf8).write(to: history)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: history.path)
        let script = try cli.file("pty-driver.py", Self.driver)
        let steps = [
            #"x = 20\r"#,
            #"json.enc\t({x + 1})\r"#,           // Tab completes json.encode
            #"\x1b[A\r"#,                          // up arrow: the line again
            #"y = 2\x7f3\r"#,                      // backspace
            #"oops\x03"#,                          // Ctrl-C drops the line
            #"y\r"#,
            #"for i = 1, 2 do\r"#,                 // an unfinished chunk: the continuation prompt
            #"print(i * 10) end\r"#,
        ]
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [script, steps.joined(separator: "\u{1F}"), CLIHarness.binary.path, "repl", "--state-dir", cli.stateDir.path]
        p.currentDirectoryURL = cli.root
        var environment = cli.environment
        environment["TERM"] = "xterm"
        p.environment = environment
        let done = try CLIHarness.collect(p, timeout: 120)
        let screen = String(decoding: done.stdout, as: UTF8.self)
        XCTAssertEqual(done.status, 0, screen + String(decoding: done.stderr, as: UTF8.self))
        XCTAssertEqual(screen.components(separatedBy: "\"[21]\"").count - 1, 2, screen)
        XCTAssertTrue(screen.contains("hubscript repl: reads are live; writes are planned and shown, never sent. :help for help, Ctrl-D to end.\r\n"), screen)
        XCTAssertTrue(screen.contains("json.encode"), screen)
        XCTAssertTrue(screen.contains("^C"), screen)
        XCTAssertTrue(screen.contains("\r\n3\r\n"), screen)
        XCTAssertFalse(screen.contains("oops'"), screen)
        XCTAssertTrue(screen.contains("\r>> "), screen)
        XCTAssertTrue(screen.contains("\r\n10\r\n20\r\n"), screen)
        let kept = try String(contentsOf: history, encoding: .utf8)
        XCTAssertEqual(kept, "earlier = 1\nx = 20\njson.encode({x + 1})\ny = 3\ny\nfor i = 1, 2 do\nprint(i * 10) end\n")
        let mode = try FileManager.default.attributesOfItem(atPath: history.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }
}

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
        XCTAssertEqual(r.stderr, "error: cannot show value 1 as JSON: table contains a cycle\n")
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
