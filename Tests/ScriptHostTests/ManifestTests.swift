import Foundation
import XCTest
import ScriptHost

/// Manifests are read without running the body, validated key by key with messages
/// that name the file and line; parameters are typed and validated before a run.
final class ManifestTests: XCTestCase {
    private func recipe(_ source: String, path: String = "recipes/x.lua") -> RecipeFile {
        RecipeFile(displayPath: path, url: URL(fileURLWithPath: "/nonexistent/x.lua"), source: source)
    }

    private func fixture(_ name: String) throws -> RecipeFile {
        let url = try XCTUnwrap(Bundle.module.url(forResource: "Fixtures/manifests/\(name)", withExtension: "lua"))
        return RecipeFile(displayPath: "recipes/\(name).lua", url: url, source: try String(contentsOf: url, encoding: .utf8))
    }

    private func load(_ source: String) throws -> RecipeManifest {
        try RecipeManifest.load(from: recipe(source))
    }

    private func assertManifestError(_ source: String, _ message: String,
                                     file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertThrowsError(try load(source), file: file, line: line) { error in
            XCTAssertEqual((error as? ManifestError)?.message, message, file: file, line: line)
        }
    }

    // MARK: Reading without running

    func testFullManifest() throws {
        let m = try RecipeManifest.load(from: try fixture("full"))
        XCTAssertEqual(m.name, "offboard")
        XCTAssertEqual(m.version, "1.2.0")
        XCTAssertEqual(m.description, "Suspend a user and remove every kind of access they hold.")
        XCTAssertEqual(m.params.map(\.name), ["batch", "dry", "groups", "input", "ratio", "reason", "user"])
        XCTAssertEqual(m.params.map(\.kind), [.integer, .boolean, .list, .file, .number, .string, .string])
        XCTAssertEqual(m.params.map(\.defaultValue), [.integer(50), .bool(false), .array(["staff", "eng"]), nil,
                                                      .number(1.0), .string("offboarded"), nil])
        XCTAssertEqual(m.params.map(\.required), [false, false, false, false, false, false, true])
        XCTAssertEqual(m.params.map(\.description), [nil, nil, nil, "CSV of users", nil, nil, "usr_… id or email"])
        XCTAssertEqual(m.needs, ["users.manage", "entitlements.manage", "roles.manage", "audit.view"])
        XCTAssertEqual(m.limits.writes, 200)
        XCTAssertEqual(m.limits.timeoutSeconds, 90.5)
        XCTAssertEqual(m.limits.memoryMB, 64)
        XCTAssertEqual(m.limits.instructions, 1_000_000)
    }

    func testManifestLimitsApplyOverDefaults() throws {
        let m = try RecipeManifest.load(from: try fixture("full"))
        let limits = m.limits.applied(to: RunLimits())
        XCTAssertEqual(limits.writes, 200)
        XCTAssertEqual(limits.timeoutSeconds, 90.5)
        XCTAssertEqual(limits.memoryBytes, 64 << 20)
        XCTAssertEqual(limits.instructions, 1_000_000)
        XCTAssertEqual(limits.buildBytes, RunLimits().buildBytes)
    }

    func testCommentsStringsAndLongBracketsAroundAndInsideTheManifest() throws {
        let m = try RecipeManifest.load(from: try fixture("tricky"))
        XCTAssertEqual(m.name, "tricky")
        XCTAssertEqual(m.description, #"braces } { in a string, 'quotes' " and \"#)
        XCTAssertEqual(m.version, "1.0 }")
        XCTAssertEqual(m.params.map(\.defaultValue), [.string("}"), .string("a]]}{")])
    }

    /// A short comment ends at a lone `\r` as in Lua: the manifest after it is found
    /// (it was refused as "not closed" when only `\n` ended a comment).
    func testACommentEndsAtALoneCarriageReturn() throws {
        let m = try load("-- an old Mac file\rrecipe { name = \"cr\", -- note\r version = \"2.0\" }\rprint(1)\r")
        XCTAssertEqual(m.name, "cr")
        XCTAssertEqual(m.version, "2.0")
    }

    func testBodyIsNotRun() throws {
        let m = try load("""
        recipe { name = "quiet" }
        error("boom")
        local = this is not even Lua
        """)
        XCTAssertEqual(m.name, "quiet")
    }

    func testParenthesizedCallForm() throws {
        XCTAssertEqual(try load(#"recipe({ name = "paren" })"#).name, "paren")
    }

    func testEmptyParamsAndNeeds() throws {
        let m = try load(#"recipe { name = "x", params = {}, needs = {} }"#)
        XCTAssertEqual(m.params, [])
        XCTAssertEqual(m.needs, [])
        XCTAssertNil(m.limits.writes)
        XCTAssertNil(m.limits.timeoutSeconds)
        XCTAssertNil(m.limits.memoryMB)
        XCTAssertNil(m.limits.instructions)
    }

    func testSecretsAreVaultEntryNamesListedOnce() throws {
        let m = try load(#"recipe { name = "x", secrets = { "dispatch/ci", "hub/prod-key", "dispatch/ci" } }"#)
        XCTAssertEqual(m.secrets, ["dispatch/ci", "hub/prod-key"])
        XCTAssertEqual(try load(#"recipe { name = "x" }"#).secrets, [])
        XCTAssertTrue(ManifestDescription.text(m).contains("\nSecrets: dispatch/ci, hub/prod-key\n"))
    }

    func testTargetsAreNamesListedOnceAndDescribed() throws {
        let m = try load(#"recipe { name = "x", targets = { "ops", "on-call_2", "ops" } }"#)
        XCTAssertEqual(m.targets, ["ops", "on-call_2"])
        XCTAssertEqual(try load(#"recipe { name = "x", targets = {} }"#).targets, [])
        XCTAssertTrue(ManifestDescription.text(m).contains("\nTargets: ops, on-call_2\n"))
        XCTAssertEqual(ManifestDescription.json(m)["targets"], .array(["ops", "on-call_2"]))
    }

    /// A target is a name the configuration defines: never a URL, a path or an empty string.
    func testATargetMustBeAName() {
        for bad in [#""""#, #""https://evil.example.com""#, #""a b""#, #""-ops""#, #""ops/x""#, "42", #"{}"#,
                    "\"" + String(repeating: "a", count: 65) + "\""] {
            assertManifestError(#"recipe { name = "x", targets = { "ok", "# + bad + #" } }"#,
                                #"recipes/x.lua:1: manifest: targets[2] must be a target name such as "ops" (letters, digits, _ -; a URL is not a target: the configuration gives each target its URL)"#)
        }
        assertManifestError(#"recipe { name = "x", targets = "ops" }"#,
                            #"recipes/x.lua:1: manifest: 'targets' must be a list of Dispatch target names the configuration defines, such as { "ops" }"#)
        let many = (1...33).map { "\"t\($0)\"" }.joined(separator: ", ")
        assertManifestError("recipe { name = \"x\", targets = { \(many) } }",
                            "recipes/x.lua:1: manifest: 'targets' lists 33 targets; a recipe may reach at most 32")
    }

    func testASecretNameMustBeAVaultEntryName() {
        for bad in [#""""#, #""../etc/passwd""#, #""a//b""#, #""/abs""#, #""a b""#, "42", #""a/./b""#] {
            assertManifestError(#"recipe { name = "x", secrets = { "ok", "# + bad + #" } }"#,
                                #"recipes/x.lua:1: manifest: secrets[2] must be a vault entry name such as "dispatch/ci" (letters, digits, . _ / -)"#)
        }
        assertManifestError(#"recipe { name = "x", secrets = "dispatch/ci" }"#,
                            #"recipes/x.lua:1: manifest: 'secrets' must be a list of vault entry names such as { "dispatch/ci" }"#)
    }

    // MARK: Where the manifest is

    func testMustStartWithTheManifest() {
        assertManifestError("print('hi')\nrecipe { name = \"x\" }",
                            "recipes/x.lua:1: a recipe must start with its manifest: recipe { name = …, … }")
        assertManifestError("-- header\n\nlocal x = 1",
                            "recipes/x.lua:3: a recipe must start with its manifest: recipe { name = …, … }")
        assertManifestError("", "recipes/x.lua:1: a recipe must start with its manifest: recipe { name = …, … }")
    }

    func testMustBeCalledWithATable() {
        assertManifestError(#"recipe "x""#, "recipes/x.lua:1: recipe must be called with a table: recipe { name = …, … }")
    }

    func testUnclosedTable() {
        assertManifestError("recipe {\n  name = \"x\",\n", "recipes/x.lua:1: the manifest table is not closed (missing '}')")
    }

    func testUnfinishedStringInsideTheManifest() {
        assertManifestError("recipe {\n  name = \"x }\n}", "recipes/x.lua:2: unfinished string")
    }

    func testUnfinishedLongStringInsideTheManifest() {
        assertManifestError("recipe {\n  name = [==[x ]] }\n}", "recipes/x.lua:2: unfinished long string or comment")
    }

    func testUnfinishedLongCommentBeforeTheManifestIsReportedAsSuch() throws {
        // Regression: the locator used to drop this failure and blame a missing manifest.
        assertManifestError("--[[ never closed\nrecipe { name = \"x\" }", "recipes/x.lua:1: unfinished long string or comment")
    }

    func testEscapesInsideManifestStrings() throws {
        let m = try load(#"recipe { name = "x\"}", description = 'it\'s \\', version = "\u{7B}" }"#)
        XCTAssertEqual(m.name, "x\"}")
        XCTAssertEqual(m.description, "it's \\")
        XCTAssertEqual(m.version, "{")
    }

    func testBackslashZInManifestStringSkipsTheLineBreak() throws {
        // Regression: Lua's `\z` escape skips white space, newlines included.
        let source = "recipe { name = \"x\", description = \"long \\z\n    text\" }"
        XCTAssertEqual(try load(source).description, "long text")
    }

    func testSyntaxErrorInsideTheManifest() {
        assertManifestError("\nrecipe { name = \"x\" ; = }", "recipes/x.lua:2: unexpected symbol near '='")
    }

    func testRuntimeErrorInsideTheManifest() {
        assertManifestError("recipe { name = nope.x }",
                            "recipes/x.lua:1: only literal values are allowed here (data only), not the global 'nope'")
    }

    func testRunawayManifestExpressionHitsItsInstructionLimit() {
        assertManifestError("recipe { name = (function() while true do end end)() }",
                            "recipes/x.lua: runs more than 10000000 instructions while evaluating; it must be plain data")
    }

    func testManifestWhoseInstructionsAreEachSlowHitsItsDeadline() {
        // Each comparison of two 1 MiB strings is one instruction: the instruction cap
        // alone would let this run for minutes.
        let source = #"""
        recipe { name = (function()
          local s = "ab"
          for i = 1, 19 do s = s .. s end
          local t, u, n = s .. "x", s .. "y", 0
          for i = 1, 1e7 do if t == u then n = n + 1 end end
          return "x" end)() }
        """#
        let start = Date()
        assertManifestError(source, "recipes/x.lua: takes too long to evaluate (time limit); it must be plain data")
        XCTAssertLessThan(Date().timeIntervalSince(start), 60, "the deadline did not stop the manifest")
    }

    func testManifestThatBuildsLargeStringsHitsItsMemoryCap() {
        assertManifestError(#"""
        recipe { name = (function() local s = "ab" for i = 1, 24 do s = s .. s end return s end)() }
        """#, "recipes/x.lua: uses more than 8 MiB while evaluating; it must be plain data")
    }

    func testRunawayPatternInManifestCannotRun() throws {
        // Regression: a manifest could run a long C call (a pattern match) that no
        // hook interrupts. Manifests are data only now: no globals, no string methods.
        assertManifestError(#"recipe { name = ("a"):rep(40):find(("a*"):rep(20) .. "b") or "x" }"#,
                            "recipes/x.lua:1: attempt to index a string value (constant 'a')")
        let file = recipe(#"recipe { name = string.find(string.rep("a", 40), string.rep("a*", 20) .. "b") or "x" }"#)
        let done = DispatchSemaphore(value: 0)
        Thread.detachNewThread {
            _ = try? RecipeManifest.load(from: file)
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 5), .success, "RecipeManifest.load did not return within 5 s")
        XCTAssertThrowsError(try RecipeManifest.load(from: file)) { error in
            XCTAssertEqual("\(error)", "recipes/x.lua:1: only literal values are allowed here (data only), not the global 'string'")
        }
    }

    // MARK: Validation of keys and types

    func testUnknownKey() {
        assertManifestError(#"recipe { name = "x", colour = "red" }"#,
            "recipes/x.lua:1: manifest: unknown key 'colour' in the manifest (allowed: name, version, description, params, needs, secrets, targets, limits)")
    }

    func testMissingName() {
        assertManifestError(#"recipe { version = "1" }"#,
                            #"recipes/x.lua:1: manifest: 'name' is required (a short identifier such as "offboard")"#)
    }

    func testNameOfWrongTypeOrEmpty() {
        assertManifestError("recipe { name = 1 }", "recipes/x.lua:1: manifest: 'name' must be a non-empty string")
        assertManifestError(#"recipe { name = "" }"#, "recipes/x.lua:1: manifest: 'name' must be a non-empty string")
    }

    func testOptionalStringsOfWrongType() {
        assertManifestError(#"recipe { name = "x", version = 1.5 }"#,
                            "recipes/x.lua:1: manifest: 'version' must be a string, got number")
        assertManifestError(#"recipe { name = "x", description = {} }"#,
                            "recipes/x.lua:1: manifest: 'description' must be a string, got table")
    }

    func testManifestLineIsWhereTheTableStarts() {
        assertManifestError("-- comment\n\nrecipe {\n  name = 1 }",
                            "recipes/x.lua:3: manifest: 'name' must be a non-empty string")
    }

    func testParamsErrors() {
        let kinds = "string, number, integer, boolean, list, file, table"
        let cases: [(String, String)] = [
            (#"params = "user""#, "'params' must be a table of name = { type = … }"),
            (#"params = { "user" }"#, "'params' must be a table of name = { type = … }"),
            (#"params = { a = "string" }"#, #"params.a must be a table such as { type = "string" }"#),
            ("params = { a = {} }", "params.a.type is required (one of: \(kinds))"),
            (#"params = { a = { type = "float" } }"#, "params.a.type 'float' is not a parameter type (one of: \(kinds))"),
            (#"params = { a = { type = "string", colour = 1 } }"#,
             "unknown key 'colour' in params.a (allowed: type, required, default, description)"),
            (#"params = { a = { type = "string", required = "yes" } }"#, "params.a.required must be true or false"),
            (#"params = { a = { type = "integer", default = "abc" } }"#, "params.a.default must be an integer, got string"),
            (#"params = { a = { type = "integer", default = 1.5 } }"#, "params.a.default must be an integer, got number"),
            (#"params = { a = { type = "boolean", default = "true" } }"#,
             "params.a.default must be a boolean (true or false), got string"),
            (#"params = { a = { type = "list", default = { 1 } } }"#, "params.a.default must be a list of strings, got table"),
            (#"params = { a = { type = "file", default = "x.csv" } }"#, "params.a: a file parameter cannot have a default"),
            (#"params = { a = { type = "string", description = 3 } }"#, "'params.a.description' must be a string, got number"),
        ]
        for (field, message) in cases {
            assertManifestError(#"recipe { name = "x", \#(field) }"#, "recipes/x.lua:1: manifest: " + message)
        }
    }

    func testDefaultsAreCoerced() throws {
        let m = try load(#"recipe { name = "x", params = { n = { type = "number", default = 2 }, i = { type = "integer", default = 3.0 }, l = { type = "list", default = {} } } }"#)
        XCTAssertEqual(m.params.map(\.defaultValue), [.integer(3), .array([]), .number(2.0)])
    }

    func testNeedsErrors() {
        assertManifestError(#"recipe { name = "x", needs = "users.manage" }"#,
            #"recipes/x.lua:1: manifest: 'needs' must be a list of permission keys such as { "users.manage" }"#)
        assertManifestError(#"recipe { name = "x", needs = { "users.view", "Users.manage" } }"#,
            #"recipes/x.lua:1: manifest: needs[2] must be a permission key such as "users.manage""#)
        assertManifestError(#"recipe { name = "x", needs = { "admin" } }"#,
            #"recipes/x.lua:1: manifest: needs[1] must be a permission key such as "users.manage""#)
    }

    func testLimitsErrors() throws {
        let cases: [(String, String)] = [
            ("limits = 5", "'limits' must be a table such as { writes = 100 }"),
            ("limits = { memory = 1 }", "unknown key 'memory' in limits (allowed: writes, timeout, memory_mb, instructions)"),
            ("limits = { timeout = -1 }", "limits.timeout must be a number of seconds above 0 and at most 86400"),
            (#"limits = { timeout = "1m" }"#, "limits.timeout must be a number of seconds above 0 and at most 86400"),
            ("limits = { timeout = 1e300 }", "limits.timeout must be a number of seconds above 0 and at most 86400"),
            ("limits = { memory_mb = 0 }", "limits.memory_mb must be an integer from 1 to 2048 (MiB)"),
            ("limits = { memory_mb = 9223372036854775807 }", "limits.memory_mb must be an integer from 1 to 2048 (MiB)"),
            ("limits = { memory_mb = 17592186044416 }", "limits.memory_mb must be an integer from 1 to 2048 (MiB)"),
            ("limits = { instructions = 1.5 }", "limits.instructions must be an integer from 1 to 1000000000000"),
            ("limits = { writes = -1 }", "limits.writes must be an integer from 0 to 1000000"),
        ]
        for (field, message) in cases {
            assertManifestError(#"recipe { name = "x", \#(field) }"#, "recipes/x.lua:1: manifest: " + message)
        }
        let limits = try load(#"recipe { name = "x", limits = { writes = 0, timeout = 2 } }"#).limits
        XCTAssertEqual(limits.writes, 0)
        XCTAssertEqual(limits.timeoutSeconds, 2)
    }

    // MARK: Describe

    func testDescriptionText() throws {
        let m = try RecipeManifest.load(from: try fixture("full"))
        XCTAssertEqual(ManifestDescription.text(m), """
        offboard 1.2.0
          Suspend a user and remove every kind of access they hold.

        Parameters:
          batch   integer   default 50
          dry     boolean   default false
          groups  list      default ["staff","eng"]
          input   file      — CSV of users
          ratio   number    default 1.0
          reason  string    default "offboarded"
          user    string    required  — usr_… id or email

        Needs: users.manage, entitlements.manage, roles.manage, audit.view
        Limits: writes 200, timeout 90.5 s, memory 64 MiB, instructions 1000000

        """)
    }

    func testDescriptionJSON() throws {
        let m = try load(#"recipe { name = "x", params = { n = { type = "integer", required = true } } }"#)
        XCTAssertEqual(try JSONCodec.encode(ManifestDescription.json(m)),
                       #"{"limits":{},"name":"x","needs":[],"params":{"n":{"required":true,"type":"integer"}},"secrets":[],"targets":[]}"#)
    }

    // MARK: Parameters

    private var paramManifest: RecipeManifest {
        get throws {
            try load("""
            recipe { name = "p", params = {
              user = { type = "string", required = true, description = "usr_… id or email" },
              n = { type = "integer", default = 5 },
              ratio = { type = "number" },
              flag = { type = "boolean" },
              tags = { type = "list" },
              input = { type = "file" },
            } }
            """)
        }
    }

    private func assertParamError(_ cli: [(String, String)], file: [String: ScriptValue] = [:], _ message: String,
                                  sourceFile: StaticString = #filePath, line: UInt = #line) throws {
        let manifest = try paramManifest
        XCTAssertThrowsError(try ParamValues(manifest: manifest, cli: cli, file: file), file: sourceFile, line: line) { error in
            XCTAssertEqual((error as? ManifestError)?.message, message, file: sourceFile, line: line)
        }
    }

    func testMissingRequiredParam() throws {
        try assertParamError([], "missing required parameter 'user' (string: usr_… id or email); pass --param user=…")
    }

    func testUnknownParam() throws {
        try assertParamError([("user", "u"), ("who", "x")],
                             "unknown parameter 'who' (this recipe takes: flag, input, n, ratio, tags, user)")
        let none = try load(#"recipe { name = "x" }"#)
        XCTAssertThrowsError(try ParamValues(manifest: none, cli: [("a", "1")])) { error in
            XCTAssertEqual((error as? ManifestError)?.message, "unknown parameter 'a' (this recipe takes no parameters)")
        }
    }

    func testIntegerParamRejectsText() throws {
        try assertParamError([("user", "u"), ("n", "abc")], "parameter 'n' must be an integer, got 'abc'")
        try assertParamError([("user", "u"), ("n", "1.5")], "parameter 'n' must be an integer, got '1.5'")
    }

    func testNumberParamRejectsNonFinite() throws {
        try assertParamError([("user", "u"), ("ratio", "inf")], "parameter 'ratio' must be a number, got 'inf'")
    }

    func testTypedValuesFromTheCommandLine() throws {
        let v = try ParamValues(manifest: try paramManifest,
                                cli: [("user", "usr_1"), ("n", " 7 "), ("ratio", "2"), ("flag", "YES"), ("tags", "a, b,,c")])
        XCTAssertEqual(v.values, ["user": "usr_1", "n": 7, "ratio": .number(2), "flag": true,
                                  "tags": ["a", "b", "", "c"]])
    }

    func testDefaultsFillMissingValues() throws {
        let v = try ParamValues(manifest: try paramManifest, cli: [("user", "u")])
        XCTAssertEqual(v.values, ["user": "u", "n": 5])
    }

    func testBooleans() throws {
        for (text, value) in [("true", true), ("on", true), ("1", true), ("False", false), ("no", false), ("off", false), ("0", false)] {
            let v = try ParamValues(manifest: try paramManifest, cli: [("user", "u"), ("flag", text)])
            XCTAssertEqual(v.values["flag"], .bool(value), text)
        }
        try assertParamError([("user", "u"), ("flag", "maybe")], "parameter 'flag' must be a boolean (true or false), got 'maybe'")
    }

    func testLists() throws {
        XCTAssertEqual(try ParamValues(manifest: try paramManifest, cli: [("user", "u"), ("tags", "")]).values["tags"], .array([]))
        XCTAssertEqual(try ParamValues(manifest: try paramManifest, cli: [("user", "u"), ("tags", "x")]).values["tags"], .array(["x"]))
    }

    /// A second --param for a one-value parameter is a mistake (letting the last one win
    /// silently would hide it); a list collects every --param.
    func testRepeatedCommandLineValueIsRefusedUnlessAList() throws {
        XCTAssertThrowsError(try ParamValues(manifest: try paramManifest, cli: [("user", "a"), ("user", "b")])) { error in
            XCTAssertEqual((error as? ManifestError)?.message,
                           "parameter 'user' given twice (--param user=a and --param user=b); it takes one value (string)")
        }
        let v = try ParamValues(manifest: try paramManifest, cli: [("user", "a"), ("tags", "x,y"), ("tags", "z")])
        XCTAssertEqual(v.values["tags"], .array(["x", "y", "z"]))
    }

    func testFileParamMustExist() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-params-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let missing = dir.appendingPathComponent("missing.csv").path
        try assertParamError([("user", "u"), ("input", missing)], "parameter 'input': file \(missing) does not exist")
        try assertParamError([("user", "u"), ("input", dir.path)], "parameter 'input': \(dir.path) is not a readable file")
        let csv = dir.appendingPathComponent("users.csv")
        try Data("id\n".utf8).write(to: csv)
        let v = try ParamValues(manifest: try paramManifest, cli: [("user", "u"), ("input", dir.path + "/./users.csv")])
        XCTAssertEqual(v.values["input"], .string(csv.standardizedFileURL.path))
    }

    func testParamsFileValues() throws {
        let v = try ParamValues(manifest: try paramManifest, cli: [("n", "9")],
                                file: ["user": "from-file", "n": 1, "ratio": 3, "flag": false, "tags": ["a"], "input": .null])
        XCTAssertEqual(v.values, ["user": "from-file", "n": 9, "ratio": .number(3), "flag": false, "tags": ["a"]])
        XCTAssertEqual(try ParamValues(manifest: try paramManifest, cli: [], file: ["user": "u", "n": 4.0]).values["n"], .integer(4))
    }

    func testParamsFileErrors() throws {
        try assertParamError([], file: ["user": "u", "extra": 1],
                             "unknown parameter 'extra' in the params file (this recipe takes: flag, input, n, ratio, tags, user)")
        try assertParamError([], file: ["user": "u", "n": "5"], "parameter 'n' must be an integer, got string in the params file")
        try assertParamError([], file: ["user": "u", "n": 5.5], "parameter 'n' must be an integer, got number in the params file")
        try assertParamError([], file: ["user": "u", "tags": [1]], "parameter 'tags' must be a list of strings, got table in the params file")
        try assertParamError([], file: ["user": .null], "missing required parameter 'user' (string: usr_… id or email); pass --param user=…")
    }

    // MARK: PreparedRecipe

    func testPreparedRecipeReadsTheParamsFile() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-prepared-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let recipePath = dir.appendingPathComponent("r.lua").path
        try Data(#"recipe { name = "r", params = { n = { type = "integer", required = true } } }"#.utf8)
            .write(to: URL(fileURLWithPath: recipePath))
        let good = dir.appendingPathComponent("good.json").path
        try Data(#"{"n": 3}"#.utf8).write(to: URL(fileURLWithPath: good))
        let bad = dir.appendingPathComponent("bad.json").path
        try Data("{".utf8).write(to: URL(fileURLWithPath: bad))
        let list = dir.appendingPathComponent("list.json").path
        try Data("[1]".utf8).write(to: URL(fileURLWithPath: list))
        let missing = dir.appendingPathComponent("missing.json").path

        XCTAssertEqual(try PreparedRecipe(path: recipePath, paramsFile: good).params.values, ["n": 3])
        XCTAssertEqual(try PreparedRecipe(path: recipePath, cliParams: [("n", "4")], paramsFile: good).params.values, ["n": 4])
        let expectations: [(String, String)] = [
            (bad, "the params file \(bad) is not valid JSON: invalid JSON at byte 2: expected a string key"),
            (list, "the params file \(list) must hold a JSON object of name: value"),
            (missing, "cannot read the params file \(missing): No such file or directory"),
        ]
        for (paramsFile, message) in expectations {
            XCTAssertThrowsError(try PreparedRecipe(path: recipePath, paramsFile: paramsFile)) { error in
                XCTAssertEqual((error as? ManifestError)?.message, message)
            }
        }
    }

    func testParseParamArguments() throws {
        let parsed = try PreparedRecipe.parseParamArguments(["a=1", "b=x=y", "c="])
        XCTAssertEqual(parsed.map(\.0), ["a", "b", "c"])
        XCTAssertEqual(parsed.map(\.1), ["1", "x=y", ""])
        for bad in ["a", "=v"] {
            XCTAssertThrowsError(try PreparedRecipe.parseParamArguments([bad])) { error in
                XCTAssertEqual((error as? ManifestError)?.message, "--param takes name=value, got '\(bad)'")
            }
        }
    }
}
