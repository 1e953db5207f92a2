import Foundation
import XCTest

/// `hubscript check` as a static analysis: each kind of finding on the corpus of broken
/// recipes (Tests/check-corpus), with its exact line and exit code; the shipped
/// recipes check clean; `LIB:RECIPE`, `--lib` and `--json`.
final class CheckCLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    private func assertCorpus(_ name: String, _ findings: [String], failed: Bool = true,
                              file: StaticString = #filePath, line: UInt = #line) throws {
        let path = "Tests/check-corpus/\(name)"
        let shown = findings.map { "\n     " + $0 }.joined()
        assertResult(try cli.hubscriptInRepo("check", path), stdout: "\(failed ? "FAIL" : "ok  ") \(path)\(shown)\n",
                     stderr: "", exitCode: failed ? 1 : 0, file: file, line: line)
    }

    func testAGlobalWrittenIsAnErrorThatSaysHowToDeclareIt() throws {
        try assertCorpus("global-write.lua", [
            "Tests/check-corpus/global-write.lua:7:1: error: undeclared global 'count' (declare it local: local count = 0)",
            "Tests/check-corpus/global-write.lua:9:3: error: undeclared global 'count' (declare it local: local count = …)",
            "Tests/check-corpus/global-write.lua:9:11: error: undeclared global 'count'",
            "Tests/check-corpus/global-write.lua:11:7: error: undeclared global 'count'",
        ])
        try assertCorpus("global-function.lua", [
            "Tests/check-corpus/global-function.lua:4:10: error: undeclared global 'greet' (declare it local: local function greet(…) … end)",
            "Tests/check-corpus/global-function.lua:7:7: error: undeclared global 'greet'",
        ])
    }

    func testAMisspeltNameHasADidYouMean() throws {
        try assertCorpus("global-typo.lua", [
            "Tests/check-corpus/global-typo.lua:4:7: warning: unused local 'total' (remove it, or name it _total if it is meant to be unused)",
            "Tests/check-corpus/global-typo.lua:5:1: error: undeclared global 'prnt' (did you mean 'print'?)",
            "Tests/check-corpus/global-typo.lua:6:7: error: undeclared global 'totl' (did you mean 'total'?)",
        ])
    }

    func testAnUnknownModuleFieldComesFromTheRegistry() throws {
        try assertCorpus("unknown-field.lua", [
            "Tests/check-corpus/unknown-field.lua:7:23: error: unknown field 'lst' in 'hub.users' (did you mean 'list'?)",
            "Tests/check-corpus/unknown-field.lua:8:16: error: unknown field 'fromat' in 'string' (did you mean 'format'?)",
        ])
    }

    func testACallWhosePermissionNeedsLacksIsAnError() throws {
        try assertCorpus("permission.lua", [
            #"Tests/check-corpus/permission.lua:10:15: error: hub.users.suspend needs 'users.manage', which the manifest's needs does not declare; add "users.manage" to needs"#,
        ])
    }

    func testParamsReadAgainstTheManifest() throws {
        try assertCorpus("params.lua", [
            "Tests/check-corpus/params.lua:5:5: warning: parameter 'days' is declared in the manifest but never read (params.days)",
            "Tests/check-corpus/params.lua:6:5: warning: parameter 'dry' is declared in the manifest but never read (params.dry)",
            "Tests/check-corpus/params.lua:10:28: error: unknown parameter 'params.dayz': the manifest declares days, dry (did you mean 'days'?)",
        ])
    }

    func testArgumentCountsFromTheDocumentedSignatures() throws {
        try assertCorpus("argument-count.lua", [
            "Tests/check-corpus/argument-count.lua:7:24: error: hub.users.get(id_or_email) takes at least 1 argument, given 0",
            "Tests/check-corpus/argument-count.lua:8:18: error: time.days_ago(n) takes at most 1 argument, given 2",
        ])
    }

    func testWarningsAloneExitZero() throws {
        try assertCorpus("unused-local.lua", [
            "Tests/check-corpus/unused-local.lua:4:7: warning: unused local 'unused' (remove it, or name it _unused if it is meant to be unused)",
        ], failed: false)
        try assertCorpus("field-write.lua", [
            "Tests/check-corpus/field-write.lua:4:8: warning: setting the field 'shout' of 'string', a table every module of the run shares (keep the value in a local table instead)",
        ], failed: false)
    }

    func testRequiredModulesAreCheckedToo() throws {
        try assertCorpus("requires-broken.lua", [
            "Tests/check-corpus/lib/broken.lua:4:3: error: undeclared global 'cache' (declare it local: local cache = 42)",
            "Tests/check-corpus/lib/broken.lua:5:10: error: undeclared global 'cache'",
        ])
        let corpus = CLIHarness.repoRoot.appendingPathComponent("Tests/check-corpus").path
        try assertCorpus("missing-module.lua", [
            "Tests/check-corpus/missing-module.lua:4:14: error: require: module 'lib.nope' not found; searched:",
            "\t\(corpus)/lib/nope.lua",
            "\t\(corpus)/lib/nope/init.lua",
        ])
    }

    func testEveryShippedRecipeAndModuleChecksClean() throws {
        let recipes = try FileManager.default.contentsOfDirectory(atPath: CLIHarness.repoRoot.appendingPathComponent("recipes").path)
            .filter { $0.hasSuffix(".lua") }.sorted().map { "recipes/" + $0 } + ["recipes/examples/hello.lua"]
        XCTAssertGreaterThanOrEqual(recipes.count, 17)
        let result = try CLIHarness.run(["check", "--json"] + recipes, in: CLIHarness.repoRoot)
        let lines = JSONLines.withoutTimestamps(result.stdout)
        XCTAssertEqual(lines.filter { $0.contains(#""type":"finding""#) }, [])
        XCTAssertEqual(lines.filter { $0.contains(#""type":"check""#) },
                       recipes.map { #"{"errors":0,"file":"\#($0)","ok":true,"problem":null,"type":"check","warnings":0}"# })
        XCTAssertEqual(result.status, 0, result.output)
        // The recipes that require recipes/lib's modules had them analysed: a module
        // with a global write fails its recipe.
        let folder = cli.root.appendingPathComponent("copy")
        try FileManager.default.copyItem(at: CLIHarness.repoRoot.appendingPathComponent("recipes"), to: folder)
        let util = folder.appendingPathComponent("lib/util.lua")
        try Data(("leaked = true\n" + (try String(contentsOf: util, encoding: .utf8))).utf8).write(to: util)
        let broken = try CLIHarness.run(["check", "access-review.lua"], in: folder, environment: cli.environment)
        XCTAssertEqual(broken.status, 1, broken.output)
        XCTAssertTrue(broken.stdout.hasSuffix("\n     lib/util.lua:1:1: error: undeclared global 'leaked' (declare it local: local leaked = true)\n"),
                      broken.stdout)
    }

    /// False positives are worse than misses: a recipe using every module the way the
    /// reference documents (wrappers' own arguments, callable modules, methods of
    /// returned objects, aliases, varargs, labels) has no finding.
    func testValidUsesOfEveryModuleHaveNoFinding() throws {
        try cli.file("valid.lua", """
            recipe {
              name = "valid-tricky",
              params = { days = { type = "integer", default = 90 }, org = { type = "string" } },
              needs = { "users.list", "users.manage", "dispatch.send" },
              targets = { "ops" },
            }

            local rows = { { a = 1 }, { a = 2 } }
            local f, s, c = ipairs(rows)
            export.jsonl("rows.jsonl", f, s, c)
            export.csv("rows.csv", rows, { columns = { "a" } })
            local bar = progress(2, "rows")
            bar:advance()
            local first = hub.users.list{ status = "active" }:first()
            local all = hub.users.list():collect()
            local ok, err = pcall(hub.users.get, "usr_1")
            local users = hub.users
            for u in users.list{} do print(u.email) end
            local settings = { ["days"] = params["days"], org = params.org }
            local n = select("#", ...)
            local t <const> = time.days_ago(settings.days)
            local mt = setmetatable({}, { __index = function(_, k) return k end })
            goto finish
            ::finish::
            print(first, all, ok, err, n, t, mt.x, json.null, json.isnull(first), os.time(), string.rep("a", 2), utf8.char(72),
                  math.max(1, 2), table.concat({}), coroutine.running(), tostring(nil), type(nil), hub.available("webhooks"))
            hub.sessions.revoke_all("usr_1")
            dispatch.send{ title = "t", body = "b" }
            local ops = dispatch.connect("ops")
            ops:send{ title = "t", body = "b" }
            local st = state.get("k")
            local strings = require("string")
            print(st, vault ~= nil, csv ~= nil, strings.upper("x"))
            """)
        assertResult(try cli.hubscript("check", "valid.lua"), stdout: "ok   valid.lua\n", stderr: "", exitCode: 0)
    }

    /// The globals and library fields are the sandbox's, not Lua's.
    func testWhatTheSandboxWithholdsIsUnknown() throws {
        try cli.file("sandboxed.lua", """
            recipe { name = "sandboxed" }
            os.execute("ls")
            io.write("x")
            local f = string.dump
            dofile("x.lua")
            print(f, os.time(), hub.sessions.revoke_all, _G)
            """)
        assertResult(try cli.hubscript("check", "sandboxed.lua"), stdout: """
            FAIL sandboxed.lua
                 sandboxed.lua:2:4: error: unknown field 'execute' in 'os'
                 sandboxed.lua:3:1: error: undeclared global 'io' (Lua has it, the recipe sandbox does not: docs/recipe-sandbox.md)
                 sandboxed.lua:4:18: error: unknown field 'dump' in 'string'
                 sandboxed.lua:5:1: error: undeclared global 'dofile' (Lua has it, the recipe sandbox does not: docs/recipe-sandbox.md)
                 sandboxed.lua:6:46: error: undeclared global '_G' (Lua has it, the recipe sandbox does not: docs/recipe-sandbox.md)

            """, stderr: "", exitCode: 1)
    }

    /// A recipe test runs with test, expect, json, log and time, and no Hub modules.
    func testRecipeTestsAreCheckedAgainstTheTestGlobals() throws {
        try cli.file("bad_test.lua", """
            local unused = 1
            tset.case("x", function()
              expect(1).to_be(1)
              local s = test.sandbox {}
              print(s, hub, json.encode({}), time.now())
            end)
            test.cas("y", function() end)
            """)
        assertResult(try cli.hubscript("check", "bad_test.lua"), stdout: """
            FAIL bad_test.lua
                 bad_test.lua:1:7: warning: unused local 'unused' (remove it, or name it _unused if it is meant to be unused)
                 bad_test.lua:2:1: error: undeclared global 'tset' (did you mean 'test'?)
                 bad_test.lua:5:12: error: undeclared global 'hub'
                 bad_test.lua:7:6: error: unknown field 'cas' in 'test' (did you mean 'case'?)

            """, stderr: "", exitCode: 1)
    }

    func testJSONHasAFindingEventEach() throws {
        let result = try cli.hubscriptInRepo("check", "--json", "Tests/check-corpus/permission.lua")
        XCTAssertEqual(JSONLines.withoutTimestamps(result.stdout), [
            #"{"code":"permission_not_declared","column":15,"file":"Tests/check-corpus/permission.lua","line":10,"message":"hub.users.suspend needs 'users.manage', which the manifest's needs does not declare; add \"users.manage\" to needs","severity":"error","type":"finding"}"#,
            #"{"errors":1,"file":"Tests/check-corpus/permission.lua","ok":false,"problem":null,"type":"check","warnings":0}"#,
            #"{"exit_code":1,"failed":0,"failed_files":1,"passed":0,"planned":0,"reads":0,"replayed":0,"run_id":null,"schema_version":1,"status":"failed","type":"summary","writes":0}"#,
        ])
        XCTAssertEqual(result.status, 1)
    }

    func testLibraryRecipesAndLibFolders() throws {
        try cli.file("ops/second.lua", "recipe { name = \"second\" }\nlocal tell = require(\"ops.tell\")\nprint(tell.word, undefinedthing)\n")
        try cli.file("ops/tell.lua", "return { word = \"row\" }\n")
        try cli.file("hubscript.config.lua", #"return { default_profile = "lab", profiles = { lab = { sandbox = true } }, libraries = { ops = "ops" } }"#)
        let second = cli.root.appendingPathComponent("ops/second.lua").path
        assertResult(try CLIHarness.run(["check", "ops:second"], in: cli.root, environment: cli.environment),
                     stdout: "FAIL ops:second\n     \(second):3:18: error: undeclared global 'undefinedthing'\n", stderr: "", exitCode: 1)
        assertResult(try CLIHarness.run(["check", "ops:nope"], in: cli.root, environment: cli.environment), stdout: "", stderr: """
            hubscript check: library ops has no recipe 'nope' (recipes: second)
            Run 'hubscript check --help' for usage.

            """, exitCode: 2)
        let described = try CLIHarness.run(["describe", "ops:second"], in: cli.root, environment: cli.environment)
        XCTAssertEqual(described.status, 0, described.output)
        XCTAssertTrue(described.stdout.hasPrefix("second\n"), described.stdout)

        // A module found only in a --lib folder, as run finds it.
        try cli.file("mods/helpers.lua", "local helpers = {}\nfunction helpers.go() return nothing end\nreturn helpers\n")
        try cli.file("uses.lua", "recipe { name = \"uses\" }\nprint(require(\"helpers\").go())\n")
        assertResult(try CLIHarness.run(["check", "uses.lua", "--lib", "mods"], in: cli.root, environment: cli.environment),
                     stdout: "FAIL uses.lua\n     mods/helpers.lua:2:30: error: undeclared global 'nothing'\n", stderr: "", exitCode: 1)
    }
}
