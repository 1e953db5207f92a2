import Foundation
import XCTest

/// `hubscript test` (recipe tests against fresh sandboxes), `hubscript new`,
/// and `require` of a standard library's name.
final class RecipeTestRunnerTests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// A recipe making three writes, whatever it reads: three users suspended.
    static let threeWrites = """
    recipe { name = "three", needs = { "users.list", "users.manage" } }
    for _, id in ipairs { "usr_ada", "usr_support", "usr_temp" } do
      hub.users.suspend(id, { reason = "test" })
    end
    print("done")
    """

    func testPassingFile() throws {
        try cli.file("hello.lua", """
        recipe { name = "hello", params = { who = { type = "string", default = "world" } }, needs = { "users.list" } }
        local user = hub.users.get("usr_ada")
        print("hello " .. params.who .. " from " .. user.email)
        """)
        try cli.file("hello_test.lua", """
        test.case("greets", function()
          local r = test.sandbox{}:run("hello.lua", { who = "tests" })
          expect(r).to_succeed()
          expect(r.output).to_equal { "hello tests from ada@example.com" }
        end)
        test.case("reads but never writes", function()
          local r = test.sandbox{}:run("hello.lua")
          expect(r.writes).to_be(0)
          expect(r.output[1]).to_match("^hello world")
        end)
        """)
        // Hidden folders (.build, .git) are not searched.
        try cli.file(".build/stale_test.lua", "error('a hidden folder was searched')\n")
        assertResult(try cli.hubscript("test"), stdout: """
        ok   hello_test.lua: greets
        ok   hello_test.lua: reads but never writes
        2 passed, 0 failed

        """, stderr: "", exitCode: 0)
    }

    func testFailingAssertionShowsBothValuesAndTheTestLine() throws {
        try cli.file("t/count_test.lua", """
        test.case("adds", function()
          expect(1 + 1).to_be(2)
        end)
        test.case("counts", function()
          expect(#{ 1, 2, 3 }).to_be(2)
        end)
        test.case("deep", function()
          expect({ a = { b = 1 }, c = "x" }).to_equal { a = { b = 2 }, c = "x" }
        end)
        test.case("contains", function()
          expect({ "a", "b" }).to_contain("c")
        end)
        """)
        assertResult(try cli.hubscript("test", "t"), stdout: """
        ok   t/count_test.lua: adds
        FAIL t/count_test.lua: counts
             t/count_test.lua:5: expected 2, got 3
        FAIL t/count_test.lua: deep
             t/count_test.lua:8: values differ at .a.b: expected 2, got 1
               expected {a = {b = 2}, c = "x"}
               got      {a = {b = 1}, c = "x"}
        FAIL t/count_test.lua: contains
             t/count_test.lua:11: expected {"a", "b"} to contain "c"
        1 passed, 3 failed

        """, stderr: "", exitCode: 1)
    }

    func testRecipeErrorInsideATest() throws {
        try cli.file("boom.lua", """
        recipe { name = "boom" }
        error("boom: nothing to do")
        """)
        try cli.file("boom_test.lua", """
        test.case("expects success", function()
          local r = test.sandbox{}:run("boom.lua")
          expect(r).to_succeed()
        end)
        test.case("expects the failure", function()
          local r = test.sandbox{}:run("boom.lua")
          expect(r).to_fail_with(1)
          expect(r.failure.message).to_be("boom.lua:2: boom: nothing to do")
        end)
        test.case("test code that errors", function()
          local missing
          return missing.field
        end)
        """)
        assertResult(try cli.hubscript("test", "boom_test.lua"), stdout: """
        FAIL boom_test.lua: expects success
             boom_test.lua:3: expected the run to succeed, got exit code 1: boom.lua:2: boom: nothing to do
        ok   boom_test.lua: expects the failure
        FAIL boom_test.lua: test code that errors
             boom_test.lua:12: attempt to index a nil value (local 'missing')
        1 passed, 2 failed

        """, stderr: "", exitCode: 1)
    }

    func testKillAfterWritesThenResumeMakesEachWriteOnce() throws {
        try cli.file("three.lua", Self.threeWrites)
        try cli.file("three_test.lua", """
        test.case("kill after 2 writes, resume", function()
          local s = test.sandbox{ fixtures = { users = { { id = "usr_temp", email = "temp@example.com" } } } }
          local first = s:run("three.lua", {}, { kill_after_writes = 2 })
          expect(first.killed).to_be(true)
          expect(first.exit_code).to_be(4)
          expect(first.writes).to_be(2)
          expect(first.output).to_equal {}
          expect(s:get("/users/usr_support").status).to_be("suspended")
          expect(s:get("/users/usr_temp").status).to_be("active")
          local again = s:resume(first.run_id)
          expect(again).to_succeed()
          expect(again.run_id).to_be(first.run_id)
          expect(again.replayed).to_be(2)
          expect(again.writes).to_be(1)
          expect(#s:list("/audit-events", { action = "user.suspended", target_user_id = "usr_ada" })).to_be(1)
          expect(#s:list("/audit-events", { action = "user.suspended", target_user_id = "usr_support" })).to_be(1)
          expect(#s:list("/audit-events", { action = "user.suspended", target_user_id = "usr_temp" })).to_be(1)
        end)
        test.case("plan mode writes nothing", function()
          local s = test.sandbox{ fixtures = { users = { { id = "usr_temp", email = "temp@example.com" } } } }
          local r = s:run("three.lua", {}, { mode = "plan" })
          expect(r).to_succeed()
          expect(r.writes).to_be(0)
          expect(r.planned).to_be(3)
          expect(#r.plan.writes).to_be(3)
          expect(s:get("/users/usr_ada").status).to_be("active")
          expect(#s:list("/audit-events", { action = "user.suspended", since = "2020-01-01T00:00:00Z" })).to_be(0)
        end)
        """)
        assertResult(try cli.hubscript("test", "three_test.lua"), stdout: """
        ok   three_test.lua: kill after 2 writes, resume
        ok   three_test.lua: plan mode writes nothing
        2 passed, 0 failed

        """, stderr: "", exitCode: 0)
    }

    func testJSONAndFileErrors() throws {
        try cli.file("a_test.lua", """
        test.case("passes", function() expect(true).to_be(true) end)
        """)
        try cli.file("b_test.lua", "test.case(\"x\", function()\n")
        let result = try cli.hubscript("test", "--json")
        XCTAssertEqual(result.status, 1)
        let events = result.stdout.split(separator: "\n").map {
            try! JSONSerialization.jsonObject(with: Data($0.utf8)) as! [String: Any]
        }
        XCTAssertEqual(events.map { $0["type"] as? String }, ["test", "test", "summary"])
        XCTAssertEqual(events[0]["name"] as? String, "passes")
        XCTAssertEqual(events[0]["ok"] as? Bool, true)
        XCTAssertEqual(events[1]["file"] as? String, "b_test.lua")
        XCTAssertEqual(events[1]["ok"] as? Bool, false)
        XCTAssertTrue((events[1]["message"] as? String ?? "").hasPrefix("b_test.lua:"), "\(events[1])")
        XCTAssertEqual(events[2]["passed"] as? Int, 1)
        XCTAssertEqual(events[2]["failed_tests"] as? Int, 1)
        XCTAssertEqual(events[2]["exit_code"] as? Int, 1)
    }

    func testNoTestFilesIsAUsageError() throws {
        assertResult(try cli.hubscript("test"), stdout: "", stderr: """
        hubscript test: no *_test.lua files in .
        Run 'hubscript test --help' for usage.

        """, exitCode: 2)
    }

    func testNewCreatesARecipeAndTestThatPass() throws {
        assertResult(try cli.hubscript("new", "rotate-keys"), stdout: """
        created rotate-keys.lua
        created rotate-keys_test.lua
        wrote .hubscript/luals/ (lua-language-server definitions)
        created .luarc.json
        created .luacheckrc
        next: edit rotate-keys.lua, then run hubscript test rotate-keys_test.lua

        """, stderr: "", exitCode: 0)
        assertResult(try cli.hubscript("check", "rotate-keys.lua", "rotate-keys_test.lua"), stdout: """
        ok   rotate-keys.lua
        ok   rotate-keys_test.lua
        2 passed, 0 failed

        """, stderr: "", exitCode: 0)
        assertResult(try cli.hubscript("test"), stdout: """
        ok   rotate-keys_test.lua: prints the user's status
        ok   rotate-keys_test.lua: refuses a user that does not exist
        2 passed, 0 failed

        """, stderr: "", exitCode: 0)
        let before = try String(contentsOf: cli.root.appendingPathComponent("rotate-keys.lua"), encoding: .utf8)
        assertResult(try cli.hubscript("new", "rotate-keys"), stdout: "",
                     stderr: "hubscript new: rotate-keys.lua and rotate-keys_test.lua already exist; nothing was written\n",
                     exitCode: 1)
        XCTAssertEqual(try String(contentsOf: cli.root.appendingPathComponent("rotate-keys.lua"), encoding: .utf8), before)
    }

    func testNewRefusesWhenOnlyTheTestExists() throws {
        try cli.file("ops/sync_test.lua", "-- mine\n")
        assertResult(try cli.hubscript("new", "ops/sync"), stdout: "",
                     stderr: "hubscript new: ops/sync_test.lua already exists; nothing was written\n", exitCode: 1)
        XCTAssertFalse(FileManager.default.fileExists(atPath: cli.root.appendingPathComponent("ops/sync.lua").path))
    }

    func testNewRejectsBadNames() throws {
        let cases: [(String, String)] = [
            ("Rotate", "'Rotate' is not a recipe name: it must start with a lowercase letter (a-z)"),
            ("9lives", "'9lives' is not a recipe name: it must start with a lowercase letter (a-z)"),
            ("rotate_keys", "'rotate_keys' is not a recipe name: '_' is not allowed (use lowercase letters, digits and dashes)"),
            ("rotate-", "'rotate-' is not a recipe name: it must not end with a dash"),
            ("keys-test", "'keys-test' is not a recipe name: a name ending in test would read as a test file"),
            ("nowhere/x", "no such folder: nowhere"),
        ]
        for (name, message) in cases {
            assertResult(try cli.hubscript("new", name), stdout: "",
                         stderr: "hubscript new: \(message)\nRun 'hubscript new --help' for usage.\n", exitCode: 2)
        }
        assertResult(try cli.hubscript("new"), stdout: "",
                     stderr: "hubscript new: missing the recipe NAME (e.g. rotate-keys)\nRun 'hubscript new --help' for usage.\n",
                     exitCode: 2)
    }

    /// `kill_during_write = N`: write N reaches the Hub, its response is lost, the process
    /// is gone; the resume resends it under its key and the Hub answers it once.
    func testKillDuringAWriteThenResumeMakesEachWriteOnce() throws {
        try cli.file("three.lua", Self.threeWrites)
        try cli.file("careful.lua", """
        recipe { name = "careful", needs = { "users.list", "users.manage" } }
        for _, id in ipairs { "usr_ada", "usr_support", "usr_temp" } do
          local ok, err = pcall(hub.users.suspend, id, { reason = "test" })
          if not ok then print("caught " .. tostring(err.code)) end
        end
        print("done")
        """)
        try cli.file("kill_test.lua", """
        local users = { users = { { id = "usr_temp", email = "temp@example.com" } } }
        local function suspensions(s, id)
          return #s:list("/audit-events", { action = "user.suspended", target_user_id = id })
        end
        test.case("killed during write 2, resumed", function()
          local s = test.sandbox{ fixtures = users }
          local first = s:run("three.lua", {}, { kill_during_write = 2 })
          expect(first.killed).to_be(true)
          expect(first.exit_code).to_be(1)
          expect(first.failure.code).to_be("process_killed")
          expect(first.writes).to_be(2)
          expect(first.output).to_equal {}
          expect(s:get("/users/usr_support").status).to_be("suspended")
          expect(s:get("/users/usr_temp").status).to_be("active")
          local again = s:resume(first.run_id)
          expect(again).to_succeed()
          expect(again.replayed).to_be(1)
          expect(again.writes).to_be(2)
          expect(again.output).to_equal { "done" }
          expect(suspensions(s, "usr_ada")).to_be(1)
          expect(suspensions(s, "usr_support")).to_be(1)
          expect(suspensions(s, "usr_temp")).to_be(1)
        end)
        test.case("a recipe that catches the lost write cannot go on", function()
          local s = test.sandbox{ fixtures = users }
          local first = s:run("careful.lua", {}, { kill_during_write = 1 })
          expect(first.killed).to_be(true)
          expect(first.exit_code).to_be(4)
          expect(first.failure.kind).to_be("limit.host")
          expect(first.output).to_equal { "caught process_killed" }
          expect(s:get("/users/usr_support").status).to_be("active")
          expect(s:resume(first.run_id)).to_succeed()
          expect(suspensions(s, "usr_ada")).to_be(1)
          expect(suspensions(s, "usr_support")).to_be(1)
        end)
        test.case("a bad kill_during_write", function()
          local s = test.sandbox{}
          expect(function() s:run("three.lua", {}, { kill_during_write = 0 }) end)
            .to_fail_with("kill_during_write must be a whole number from 1 (the write whose response is lost), got 0")
          expect(function() s:run("three.lua", {}, { kill_during_write = "2" }) end)
            .to_fail_with("got a string")
          expect(function() s:run("three.lua", {}, { kill_during_write = 1, kill_after_writes = 1 }) end)
            .to_fail_with("not both")
        end)
        """)
        assertResult(try cli.hubscript("test", "kill_test.lua"), stdout: """
        ok   kill_test.lua: killed during write 2, resumed
        ok   kill_test.lua: a recipe that catches the lost write cannot go on
        ok   kill_test.lua: a bad kill_during_write
        3 passed, 0 failed

        """, stderr: "", exitCode: 0)
    }

    func testRequireOfAStandardLibraryNameReturnsTheBuiltIn() throws {
        try cli.file("utf8.lua", "error('the file utf8.lua was loaded')\n")
        try cli.file("string.lua", "error('the file string.lua was loaded')\n")
        try cli.file("std.lua", """
        recipe { name = "std" }
        local u = require("utf8")
        print(u == utf8, u.char(72, 105), require("string") == string, require("math").max(1, 2))
        """)
        let result = try cli.hubscript("run", "std.lua")
        XCTAssertEqual(result.stdout, "true\tHi\ttrue\t2\n")
        XCTAssertEqual(result.status, 0)
    }

    func testConfiguredLibraryIsSearchedAfterTheRecipesFolder() throws {
        try cli.file("hubscript.config.lua", """
        return { profiles = { local_sandbox = { sandbox = true } }, libraries = { ops = "shared/ops" } }
        """)
        try cli.file("shared/ops/greeting.lua", "return { text = 'from the library' }\n")
        try cli.file("shared/ops/only.lua", "return { text = 'only in the library' }\n")
        try cli.file("r/ops/greeting.lua", "return { text = 'from the recipe folder' }\n")
        try cli.file("r/lib.lua", """
        recipe { name = "lib" }
        print(require("ops.greeting").text)
        print(require("ops.only").text)
        """)
        XCTAssertEqual(try cli.hubscript("trust", "--config", "hubscript.config.lua").status, 0)
        let result = try cli.hubscript("run", "r/lib.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(result.stdout, "from the recipe folder\nonly in the library\n")
        XCTAssertEqual(result.status, 0, result.stderrWithoutRunStart)
        try cli.file("hubscript.config.lua", "return { libraries = { ops = \"missing\" } }\n")
        let missing = try cli.hubscript("run", "r/lib.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(missing.status, 2)
        XCTAssertTrue(missing.stderrWithoutRunStart.contains("hubscript.config.lua: libraries.ops: no such folder "), missing.stderrWithoutRunStart)
    }

    func testTrustPinsLibrariesAndAChangedModuleIsRefusedWithWhatItAdds() throws {
        try cli.file("hubscript.config.lua", """
        return { profiles = { local_sandbox = { sandbox = true } }, libraries = { ops = "shared/ops" } }
        """)
        try cli.file("shared/ops/greeting.lua", "return { text = 'v1' }\n")
        try cli.file("shared/ops/suspend.lua", """
        recipe { name = "suspend", needs = { "users.list" }, limits = { writes = 1 } }
        """)
        try cli.file("r/lib.lua", """
        recipe { name = "lib" }
        print(require("ops.greeting").text)
        """)
        let untrusted = try cli.hubscript("run", "r/lib.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(untrusted.status, 1)
        XCTAssertTrue(untrusted.stderrWithoutRunStart.contains("r/lib.lua:2: library ops is not trusted yet (no "), untrusted.stderrWithoutRunStart)
        assertResult(try cli.hubscript("verify", "--config", "hubscript.config.lua"),
                     stdout: "no hubscript.lock: the libraries were never trusted (run hubscript trust)\n", stderr: "", exitCode: 1)
        assertResult(try cli.hubscript("trust", "--config", "hubscript.config.lua"), stdout: """
        added: ops/greeting.lua
        added: ops/suspend.lua; the new manifest asks for: needs users.list; limit writes 1
        trusted ops: 2 files pinned in hubscript.lock

        """, stderr: "", exitCode: 0)
        assertResult(try cli.hubscript("verify", "--config", "hubscript.config.lua"),
                     stdout: "ok: 2 files of ops match hubscript.lock\n", stderr: "", exitCode: 0)
        XCTAssertEqual(try cli.hubscript("run", "r/lib.lua", "--config", "hubscript.config.lua").stdout, "v1\n")

        try cli.file("shared/ops/greeting.lua", "return { text = 'v2' }\n")
        try cli.file("shared/ops/suspend.lua", """
        recipe { name = "suspend", needs = { "users.list", "users.manage" }, secrets = { "dispatch/ci" }, targets = { "ops" },
                 limits = { writes = 50 } }
        """)
        func stable(_ text: String) -> String {
            text.replacingOccurrences(of: #"sha256 [0-9a-f]{12}…, now [0-9a-f]{12}…"#, with: "sha256 OLD…, now NEW…",
                                      options: .regularExpression)
        }
        let changes = """
        changed: ops/greeting.lua (sha256 OLD…, now NEW…)
        changed: ops/suspend.lua (sha256 OLD…, now NEW…); the new manifest adds: needs users.manage; \
        reads the secret dispatch/ci; sends to the Dispatch target ops; limit writes 50 (was 1)
        """
        // A recipe of the library is refused before it starts, with every change.
        let refused = try cli.hubscript("run", "shared/ops/suspend.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(refused.stdout, "")
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(stable(refused.stderrWithoutRunStart).contains("""
        nothing ran:
          \(changes.replacingOccurrences(of: "\n", with: "\n  "))
        Review the changes, then run hubscript trust ops to pin them (hubscript verify lists them again).
        """), refused.stderrWithoutRunStart)
        // A recipe outside it fails at the require of the changed module.
        let refusedModule = try cli.hubscript("run", "r/lib.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(refusedModule.stdout, "")
        XCTAssertEqual(refusedModule.status, 1)
        XCTAssertTrue(refusedModule.stderrWithoutRunStart.contains("r/lib.lua:2: library file ops/greeting.lua changed since it was trusted: "),
                      refusedModule.stderrWithoutRunStart)
        let verify = try cli.hubscript("verify", "--config", "hubscript.config.lua")
        XCTAssertEqual(stable(verify.stdout), changes + "\n2 differences from hubscript.lock\n")
        XCTAssertEqual(verify.status, 1)
        let trust = try cli.hubscript("trust", "ops", "--config", "hubscript.config.lua")
        XCTAssertEqual(stable(trust.stdout), changes + "\ntrusted ops: 2 files pinned in hubscript.lock\n")
        XCTAssertEqual(try cli.hubscript("run", "r/lib.lua", "--config", "hubscript.config.lua").stdout, "v2\n")
        XCTAssertEqual(try cli.hubscript("verify", "--config", "hubscript.config.lua").status, 0)
    }

    func testTrustByPathPinsThatFileOrFolderOnly() throws {
        try cli.file("hubscript.config.lua", """
        return { profiles = { local_sandbox = { sandbox = true } }, libraries = { ops = "shared/ops" } }
        """)
        try cli.file("shared/ops/greeting.lua", "return { text = 'v1' }\n")
        try cli.file("shared/ops/suspend.lua", "recipe { name = \"suspend\", needs = { \"users.list\" } }\n")
        try cli.file("elsewhere/x.lua", "return 1\n")
        try cli.file("shared/ops/dir.lua/notes.txt", "a folder named like a module is no module\n")
        XCTAssertEqual(try cli.hubscript("trust", "--config", "hubscript.config.lua").status, 0)
        try cli.file("shared/ops/greeting.lua", "return { text = 'v2' }\n")
        try cli.file("shared/ops/suspend.lua", "recipe { name = \"suspend\", needs = { \"users.list\", \"users.manage\" } }\n")
        func stable(_ text: String) -> String {
            text.replacingOccurrences(of: #"sha256 [0-9a-f]{12}…, now [0-9a-f]{12}…"#, with: "sha256 OLD…, now NEW…",
                                      options: .regularExpression)
        }
        // One file by its path: only it is pinned again.
        let one = try cli.hubscript("trust", "shared/ops/suspend.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(stable(one.stdout), """
        changed: ops/suspend.lua (sha256 OLD…, now NEW…); the new manifest adds: needs users.manage
        trusted ops/suspend.lua: 1 file pinned in hubscript.lock

        """, one.stderrWithoutRunStart)
        XCTAssertEqual(one.status, 0)
        let verify = try cli.hubscript("verify", "--config", "hubscript.config.lua")
        XCTAssertEqual(stable(verify.stdout), "changed: ops/greeting.lua (sha256 OLD…, now NEW…)\n1 difference from hubscript.lock\n")
        XCTAssertEqual(verify.status, 1)
        XCTAssertEqual(try cli.hubscript("verify", "shared/ops/suspend.lua", "--config", "hubscript.config.lua").status, 0)
        // A path outside every library, and a name that is neither.
        let outside = try cli.hubscript("trust", "elsewhere/x.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(outside.status, 2)
        XCTAssertTrue(outside.stderrWithoutRunStart.hasPrefix("hubscript trust: elsewhere/x.lua is not a .lua file or folder inside a library of "),
                      outside.stderrWithoutRunStart)
        XCTAssertTrue(outside.stderrWithoutRunStart.contains("(libraries: ops at shared/ops)"), outside.stderrWithoutRunStart)
        // The library's folder by its path: the whole library.
        let whole = try cli.hubscript("trust", "shared/ops", "--config", "hubscript.config.lua")
        XCTAssertEqual(stable(whole.stdout), "changed: ops/greeting.lua (sha256 OLD…, now NEW…)\ntrusted ops: 2 files pinned in hubscript.lock\n")
        XCTAssertEqual(try cli.hubscript("verify", "--config", "hubscript.config.lua").status, 0)
    }

    func testShippedRecipeTests() throws {
        let result = try CLIHarness.run(["test", "recipes/"], in: CLIHarness.repoRoot, timeout: 120)
        XCTAssertEqual(result.status, 0, result.stdout + result.stderrWithoutRunStart)
        XCTAssertFalse(result.stdout.contains("FAIL"), result.stdout)
        XCTAssertTrue(result.stdout.hasSuffix(" passed, 0 failed\n"), result.stdout)
    }
}
