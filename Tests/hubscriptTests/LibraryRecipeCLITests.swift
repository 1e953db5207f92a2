import Foundation
import XCTest

/// Recipes run from a library by name (`hubscript ops:offboard`), `allow`
/// bounds set by the caller, libraries in every path that runs a recipe (resume, plan
/// and apply, jobs), and pin failures as `--json` events.
final class LibraryRecipeCLITests: XCTestCase {
    var cli: CLIHarness!
    var config: String!

    /// Suspends `params.user` (one write), with a helper module of its library.
    static let offboard = """
        recipe { name = "offboard", params = { user = { type = "string", default = "usr_ada" } },
                 needs = { "users.list", "users.manage" } }
        local words = require("ops.words")
        hub.users.suspend(params.user, { reason = "offboarding" })
        print(words.done(params.user))
        """

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        try cli.file("shared/ops/offboard.lua", Self.offboard)
        try cli.file("shared/ops/words.lua", "return { done = function(u) return 'offboarded ' .. u end }\n")
        try cli.file("shared/ops/audit/export.lua", "recipe { name = \"export\", needs = { \"audit.view\" } }\nprint('export')\n")
        try cli.file("shared/ops/offboard_test.lua", "test.case('x', function() end)\n")
        try configure("")
        try cli.resetSandbox()
    }

    /// The configuration with library `ops` and `extra` inside its table.
    func configure(_ extra: String) throws {
        config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, libraries = { ops = "shared/ops" }, \(extra) }
            """)
    }

    func hubscript(_ args: String...) throws -> CLIHarness.Result { try cli.run(args + ["--config", config]) }

    /// A user's status in the built-in sandbox.
    func status(_ user: String) throws -> String? { try cli.sandbox().get("/users/\(user)")["status"] as? String }

    func trusted() throws {
        XCTAssertEqual(try hubscript("trust").status, 0)
    }

    func testALibraryRecipeRunsByName() throws {
        try trusted()
        var r = try hubscript("ops:offboard", "--param", "user=usr_ada")
        XCTAssertEqual(r.stdout, "offboarded usr_ada\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try hubscript("run", "ops:audit.export")
        XCTAssertEqual(r.stdout, "export\n")
        XCTAssertEqual(r.status, 0, r.stderr)

        r = try hubscript("ops:offboard", "--help")
        XCTAssertTrue(r.stdout.hasPrefix("RECIPE: offboard\n\nParameters:\n  user  string"), r.stdout)
        XCTAssertTrue(r.stdout.contains("\nNeeds: users.list, users.manage\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("USAGE: hubscript run FILE|LIB:RECIPE"), r.stdout)
        XCTAssertEqual(r.status, 0)

        r = try hubscript("ops:offbaord")
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.stderr, """
            hubscript run: library ops has no recipe 'offbaord' (recipes: audit.export, offboard)
            Run 'hubscript run --help' for usage.

            """)
        XCTAssertEqual(r.status, 2)
        r = try hubscript("run", "sec:offboard")
        XCTAssertEqual(r.stderr, "hubscript run: no library 'sec' (libraries: ops)\nRun 'hubscript run --help' for usage.\n")
        XCTAssertEqual(r.status, 2)
        r = try cli.run(["ops:offboard", "--config", try cli.file("bare.config.lua", "return { profiles = { dev = { sandbox = true } } }")])
        XCTAssertEqual(r.stderr, """
            hubscript run: ops:offboard names a recipe of library 'ops', and the configuration has no libraries (libraries = { ops = "folder" })
            Run 'hubscript run --help' for usage.

            """)
        XCTAssertEqual(r.status, 2)
    }

    /// The recipe is a library file like any other: changed since trusted, it never runs.
    func testALibraryRecipeIsPinned() throws {
        try trusted()
        try cli.file("shared/ops/offboard.lua", Self.offboard.replacingOccurrences(of: "\"users.manage\" }", with: "\"users.manage\", \"audit.view\" }"))
        let r = try hubscript("ops:offboard")
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.status, 2)
        let stable = r.stderr.replacingOccurrences(of: #"sha256 [0-9a-f]{12}…, now [0-9a-f]{12}…"#, with: "sha256 OLD…, now NEW…",
                                                   options: .regularExpression)
        XCTAssertTrue(stable.contains("nothing ran:\n  changed: ops/offboard.lua (sha256 OLD…, now NEW…); the new manifest adds: needs audit.view\n"), r.stderr)
        XCTAssertEqual(try status("usr_ada"), "active")
    }

    /// Under --json, a pin failure is an `error` event carrying what changed.
    func testAPinFailureIsAJSONErrorEventWithTheChanges() throws {
        try trusted()
        try cli.file("shared/ops/offboard.lua", Self.offboard.replacingOccurrences(of: "\"users.manage\" }", with: "\"users.manage\", \"audit.view\" }"))
        let r = try hubscript("ops:offboard", "--json")
        XCTAssertEqual(r.status, 2)
        let events = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(events.map { $0["type"] as? String }, ["error", "summary"])
        let error = events[0]
        XCTAssertEqual(error["kind"] as? String, "host")
        XCTAssertEqual(error["code"] as? String, "library_changed")
        XCTAssertEqual(error["libraries"] as? [String], ["ops"])
        XCTAssertEqual(error["lock"] as? String, cli.root.appendingPathComponent("hubscript.lock").path)
        let changes = try XCTUnwrap(error["changes"] as? [[String: Any]])
        XCTAssertEqual(changes.count, 1)
        XCTAssertEqual(changes[0]["change"] as? String, "changed")
        XCTAssertEqual(changes[0]["file"] as? String, "ops/offboard.lua")
        XCTAssertEqual((changes[0]["adds"] as? [String: Any])?["needs"] as? [String], ["audit.view"])
        XCTAssertEqual((changes[0]["sha256"] as? String)?.count, 64)
        XCTAssertNotEqual(changes[0]["sha256"] as? String, changes[0]["trusted_sha256"] as? String)
        XCTAssertTrue((changes[0]["summary"] as? String ?? "").hasSuffix("; the new manifest adds: needs audit.view"))
        XCTAssertEqual(events[1]["exit_code"] as? Int, 2)
    }

    func testAllowBoundsWhatARecipeMayAskFor() throws {
        try trusted()
        var r = try hubscript("ops:offboard", "--allow", "users.list")
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(RunStartLine.removing(from: r.stderr), """
            error: not allowed: the recipe needs users.manage, beyond what --allow allows (users.list); nothing ran. \
            Add it to the allow list if the recipe should have it.

            """)
        XCTAssertEqual(r.status, 3)
        XCTAssertEqual(try status("usr_ada"), "active")
        r = try hubscript("ops:offboard", "--allow", "users.list", "--json")
        let events = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(events.map { $0["type"] as? String }, ["error", "summary"], r.stdout)
        let error = try XCTUnwrap(events.first?["error"] as? [String: Any])
        XCTAssertEqual(error["code"] as? String, "not_allowed")
        XCTAssertEqual(error["missing"] as? [String], ["users.manage"])
        XCTAssertEqual(error["allowed"] as? [String], ["users.list"])
        XCTAssertEqual(error["caller"] as? String, "--allow")
        XCTAssertEqual(events.last?["exit_code"] as? Int, 3)
        XCTAssertEqual(r.status, 3)
        r = try hubscript("ops:offboard", "--allow", "users.list,users.manage")
        XCTAssertEqual(r.stdout, "offboarded usr_ada\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        r = try hubscript("ops:offboard", "--allow", "users.lsit")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.hasPrefix("hubscript run: --allow: unknown permission 'users.lsit' (did you mean 'users.list'?)"), r.stderr)
    }

    func testAJobsAllowRefusesARecipeThatNeedsMore() throws {
        try configure("""
            jobs = {
              narrow = { recipe = "ops:offboard", schedule = "0 * * * *", allow = { "users.list" } },
              wide = { recipe = "shared/ops/offboard.lua", schedule = "0 * * * *", allow = { "users.list", "users.manage" } },
            }
            """)
        try trusted()
        var r = try hubscript("jobs", "run", "narrow", "--now", "2026-01-01T10:20:00Z")
        XCTAssertEqual(r.status, 3, r.output)
        XCTAssertTrue(r.stderr.replacingOccurrences(of: #"\.\d{3}Z-[0-9a-f]{6}:"#, with: "Z:", options: .regularExpression).contains("""
            narrow@manual-2026-01-01T10:20:00Z: error: not allowed: the recipe needs users.manage, beyond what job "narrow" allows (users.list); nothing ran.
            """), r.stderr)
        XCTAssertEqual(try status("usr_ada"), "active")
        r = try hubscript("jobs", "run", "wide", "--now", "2026-01-01T10:21:00Z")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout.components(separatedBy: "\n").first, "offboarded usr_ada")
        var list = try hubscript("jobs", "list", "--json")
        XCTAssertTrue(list.stdout.contains(#""recipe":"ops:offboard""#), list.stdout)
        // A LIB:RECIPE names one of the libraries.
        try configure(#"jobs = { j = { recipe = "sec:offboard", schedule = "0 * * * *" } }"#)
        list = try hubscript("jobs", "list")
        XCTAssertEqual(list.stderr, #"hubscript jobs list: config \#(config!): job "j": recipe "sec:offboard" names library 'sec', which is not one of the configuration's libraries (libraries: ops)"# + "\n")
        XCTAssertEqual(list.status, 2)
        // A job's allow names permissions: a typo is a configuration error.
        try configure(#"jobs = { j = { recipe = "shared/ops/offboard.lua", schedule = "0 * * * *", allow = { "users.mange" } } }"#)
        r = try hubscript("jobs", "list")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains(#"job "j": allow: unknown permission 'users.mange' (did you mean 'users.manage'?)"#), r.stderr)
    }

    /// A job whose recipe requires a library module: the fire reads the libraries.
    func testAJobFireLoadsLibraryModules() throws {
        try cli.file("recipes/nightly.lua", """
            recipe { name = "nightly" }
            print(require("ops.words").done("nightly"))
            """)
        try configure(#"jobs = { nightly = { recipe = "recipes/nightly.lua", schedule = "0 * * * *" } }"#)
        // The fire fails as its recipe requires a module of a library never trusted.
        var r = try hubscript("jobs", "run", "nightly", "--now", "2026-01-01T10:20:00Z")
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertTrue(r.stderr.contains("nightly.lua:2: library ops is not trusted yet (no "), r.stderr)
        try trusted()
        r = try hubscript("jobs", "run", "nightly", "--now", "2026-01-01T10:21:00Z")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertTrue(r.stdout.hasPrefix("offboarded nightly\n"), r.stdout)
    }

    /// `hubscript test` reads the libraries too: a library's own recipe test runs.
    func testRecipeTestsLoadLibraryModules() throws {
        try cli.file("shared/ops/offboard_test.lua", """
            test.case("offboards", function()
              local r = test.sandbox{}:run("offboard.lua", { user = "usr_ada" })
              expect(r).to_succeed()
              expect(r.output).to_equal { require("ops.words").done("usr_ada") }
            end)
            """)
        // A test file kept in a library is that library's file: the library must be trusted.
        var r = try hubscript("test", "shared/ops")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stdout.hasPrefix("FAIL shared/ops/offboard_test.lua\n     the libraries of "), r.stdout)
        XCTAssertTrue(r.stdout.contains("are not trusted yet (no "), r.stdout)
        try trusted()
        r = try hubscript("test", "shared/ops")
        XCTAssertEqual(r.stdout, "ok   shared/ops/offboard_test.lua: offboards\n1 passed, 0 failed\n")
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    /// `runs resume` and `plan`/`apply` load modules from the configuration's libraries.
    func testResumeAndApplyLoadLibraryModules() throws {
        try cli.file("recipes/two.lua", """
            recipe { name = "two", needs = { "users.list", "users.manage" } }
            local words = require("ops.words")
            for _, id in ipairs { "usr_ada", "usr_support" } do
              hub.users.suspend(id, { reason = "two" })
              print(words.done(id))
            end
            """)
        try trusted()
        var r = try hubscript("run", "recipes/two.lua", "--max-writes", "1", "--run-id", "two-1")
        XCTAssertEqual(r.status, 4, r.output)
        XCTAssertEqual(r.stdout, "offboarded usr_ada\n")
        r = try hubscript("runs", "resume", "two-1", "--max-writes", "2")
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "offboarded usr_ada\noffboarded usr_support\n")
        XCTAssertEqual(try cli.writeStates("two-1"), ["done": 2])

        try cli.resetSandbox()
        let plan = cli.root.appendingPathComponent("two.plan.json").path
        r = try hubscript("plan", "recipes/two.lua", "--out", plan)
        XCTAssertEqual(r.status, 0, r.output)
        r = try hubscript("apply", plan)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "offboarded usr_ada\noffboarded usr_support\n")
        XCTAssertEqual([try status("usr_ada"), try status("usr_support")], ["suspended", "suspended"])

        // A library module changed since trusted stops the resume and the apply at its
        // require, as it stops a run: before the writes that follow it.
        try cli.resetSandbox()
        r = try hubscript("run", "recipes/two.lua", "--max-writes", "0", "--run-id", "two-2")
        XCTAssertEqual(r.status, 4, r.output)
        let plan2 = cli.root.appendingPathComponent("two-again.plan.json").path
        XCTAssertEqual(try hubscript("plan", "recipes/two.lua", "--out", plan2).status, 0)
        try cli.file("shared/ops/words.lua", "return { done = function(u) return 'changed ' .. u end }\n")
        let refusal = "recipes/two.lua:2: library file ops/words.lua changed since it was trusted: "
        r = try hubscript("apply", plan2)
        XCTAssertEqual(r.status, 4, r.output)
        XCTAssertTrue(r.stderr.contains("apply: checking the plan, the recipe failed before sending anything: " + refusal), r.stderr)
        r = try hubscript("runs", "resume", "two-2", "--max-writes", "2")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains(refusal), r.stderr)
        XCTAssertEqual([try status("usr_ada"), try status("usr_support")], ["active", "active"])
    }
}
