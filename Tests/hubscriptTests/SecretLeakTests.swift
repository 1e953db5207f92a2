import Foundation
import XCTest

/// Secret handles and the redactor, end to end: a recipe that loads secrets from the
/// vault and tries every way to show one — `tostring`, `..`, `json.encode`,
/// `string.format`, `error(secret)`, `log.info` with the handle, a Dispatch send with
/// the handle as its token, a run that fails while holding one — leaves no byte of any
/// secret in stdout, stderr, `--json`, the journal, the plan file, the exports or the
/// vault's own listing.
final class SecretLeakTests: XCTestCase {
    /// Distinctive values, so a scan cannot match by accident.
    static let values = ["dispatch/ci": "dsp_live_LEAKCANARY_7f3a9c1e55b2d4", "hub/prod-key": "satk_live_LEAKCANARY_0b9e8d7c6a5f"]

    static let recipe = """
        recipe {
          name = "leaky",
          params = { mode = { type = "string", default = "tries" }, echo = { type = "string", default = "" } },
          needs = { "users.list", "dispatch.send" },
          secrets = { "dispatch/ci", "hub/prod-key" },
          limits = { writes = 10 },
        }
        local d, k = vault.secret("dispatch/ci"), vault.secret("hub/prod-key")
        local function try(what, f)
          local ok, err = pcall(f)
          print(what, ok, type(err) == "table" and (err.code or json.encode(err)) or tostring(err))
        end
        print("tostring", tostring(d), tostring(k))
        try("concat", function() return "Bearer " .. d end)
        try("json", function() return json.encode({ token = d }) end)
        try("format", function() return string.format("%s", k) end)
        try("error", function() error(d) end)
        try("len", function() return #d end)
        try("field", function() return d.value end)
        log.info("handle in a log", { token = d, key = k })
        try("undeclared", function() return vault.secret("other") end)
        -- The handle is not a string: a binding that wants text refuses it.
        try("as user id", function() return hub.users.get(d) end)
        -- A recipe cannot send a secret anywhere: it names a configured target, never a URL and a token.
        try("send", function() return dispatch.connect { url = "http://127.0.0.1:9", token = d } end)
        export.jsonl("holding.jsonl", { { note = "holding " .. tostring(d), echo = params.echo } })
        -- A value that equals a secret (here a parameter) is masked wherever it goes.
        if params.echo ~= "" then
          print("echo: " .. params.echo)
          log.info("echo " .. params.echo)
          state.set("echo", { text = "x" .. params.echo .. "y" })
        end
        if params.mode == "fail" then error({ code = "boom", message = "failing while holding " .. tostring(d), token = d }) end
        print("done")
        """

    func testNoSecretByteReachesAnyOutput() throws {
        let vault = try VaultCLI(testCase: self)
        let cli = vault.harness
        try vault.initialise()
        for (name, value) in Self.values {
            let r = try vault.run(["set", name, "--key-file", vault.keyFile], stdin: value)
            XCTAssertEqual(r.status, 0, r.stderr)
        }
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        try cli.file("leaky.lua", Self.recipe)
        let recipe = "leaky.lua"   // relative to the children's folder, so messages show it whole
        let out = cli.root.appendingPathComponent("out")

        var seen: [String] = []
        let echo = try cli.run([recipe, "--param", "echo=\(Self.values["dispatch/ci"]!)", "--out", out.path])
        // A checkpoint never keeps a secret: the run stops there (exit 4), nothing stored.
        XCTAssertEqual(echo.status, 4, echo.output)
        XCTAssertTrue(echo.stderr.contains(#"state.set("echo", …): the value holds the text of the secret 'dispatch/ci'"#), echo.stderr)
        // Its params were journalled masked: a resume would hand the recipe the mask, so it is refused.
        let runID = try XCTUnwrap(echo.stderr.range(of: #"run_[0-9TZ]+_[0-9a-f]+"#, options: .regularExpression).map { String(echo.stderr[$0]) })
        let resume = try cli.run(["runs", "resume", runID])
        XCTAssertEqual(resume.status, 2, resume.stdout + resume.stderr)
        XCTAssertTrue(resume.stderr.contains("run \(runID) was started with a param holding a secret's value, which the journal keeps masked; resume it by running the recipe again with the same params and --run-id \(runID)"), resume.stderr)
        seen += [resume.stdout, resume.stderr]
        XCTAssertTrue(echo.stdout.contains("echo: <secret dispatch/ci>\n"), echo.stdout)
        XCTAssertTrue(echo.stderr.contains("[info] echo <secret dispatch/ci>"), echo.stderr)
        seen += [echo.stdout, echo.stderr]
        let plain = try cli.run([recipe, "--out", out.path])
        XCTAssertEqual(plain.status, 0, plain.output)
        XCTAssertEqual(plain.stdout.split(separator: "\n").map(String.init), [
            "tostring\t<secret dispatch/ci>\t<secret hub/prod-key>",
            "concat\tfalse\t\(recipe):14: <secret dispatch/ci> is an opaque handle: it cannot be concatenated (..); pass it only to a binding that takes it",
            "json\tfalse\t\(recipe):15: json.encode: cannot encode <secret dispatch/ci>: an opaque handle has no value to encode",
            "format\tfalse\t\(recipe):16: string.format: argument 1 is <secret hub/prod-key>, an opaque handle with no text; pass it only to a binding that takes it",
            "error\tfalse\t<secret dispatch/ci>",
            "len\tfalse\t\(recipe):18: <secret dispatch/ci> is an opaque handle: it cannot be measured (#); pass it only to a binding that takes it",
            "field\tfalse\t\(recipe):19: <secret dispatch/ci> is an opaque handle: it cannot be indexed; pass it only to a binding that takes it",
            "undeclared\tfalse\tsecret_not_declared",
            "as user id\tfalse\t\(recipe):23: bad argument #1 to 'hub.users.get' (string expected, got userdata)",
            "send\tfalse\tbad argument #1 to 'dispatch.connect' (a recipe gives no URL or token: a secret goes only where the configuration sends it; dispatch.connect(\"NAME\") names a Dispatch target of the configuration (dispatch_targets = { NAME = { url = …, token_ref = … } }) declared in the manifest's targets)",
            "done",
        ].map { $0 }, plain.output)
        seen += [plain.stdout, plain.stderr]
        let json = try cli.run([recipe, "--json", "--param", "mode=fail", "--out", out.path])
        XCTAssertEqual(json.status, 1, json.output)
        XCTAssertTrue(json.stdout.contains(#""message":"boom: failing while holding <secret dispatch/ci>""#), json.stdout)
        seen += [json.stdout, json.stderr]
        let plan = try cli.run(["plan", recipe, "--out", out.path])
        seen += [plan.stdout, plan.stderr]
        let list = try vault.run(["list", "--key-file", vault.keyFile])
        XCTAssertEqual(list.status, 0, list.stderr)
        XCTAssertTrue(list.stdout.contains("dispatch/ci"), list.stdout)
        seen += [list.stdout, list.stderr]

        // Every file the runs left: the journal (with its WAL), plans, exports, run folders.
        var files: [URL] = []
        for folder in [cli.stateDir, out, cli.root] {
            let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [.isRegularFileKey])
            while let url = walker?.nextObject() as? URL {
                // The vault itself (encrypted), its key, the recipe, and the test's own stdin files.
                if url.path.contains("/vault/") || ["leaky.lua", "vault.key"].contains(url.lastPathComponent)
                    || url.lastPathComponent.hasPrefix("in-") { continue }
                if (try? url.resourceValues(forKeys: [.isRegularFileKey]).isRegularFile) == true { files.append(url) }
            }
        }
        XCTAssertTrue(files.contains { $0.lastPathComponent == "journal.sqlite" }, "\(files)")
        XCTAssertTrue(files.contains { $0.lastPathComponent == "holding.jsonl" }, "\(files)")
        for (name, value) in Self.values {
            for (n, text) in seen.enumerated() {
                XCTAssertFalse(text.contains(value), "output \(n) shows \(name): \(text)")
                XCTAssertFalse(text.contains("LEAKCANARY"), "output \(n) shows part of \(name)")
            }
            for file in files {
                let bytes = try Data(contentsOf: file)
                XCTAssertNil(bytes.range(of: Data(value.utf8)), "\(file.path) holds \(name)")
                XCTAssertNil(bytes.range(of: Data("LEAKCANARY".utf8)), "\(file.path) holds part of \(name)")
            }
        }
    }

    /// Declared secrets are checked before the recipe runs, as needs are: one that cannot
    /// be read stops the run with exit 2 and nothing recorded.
    func testADeclaredSecretThatCannotBeReadStopsTheRunBeforeItStarts() throws {
        let vault = try VaultCLI(testCase: self)
        let cli = vault.harness
        try cli.file("needs-secret.lua", """
            recipe { name = "needs-secret", secrets = { "dispatch/ci" } }
            print("ran")
            """)
        let noVault = try cli.run(["needs-secret.lua"], expect: 2)
        XCTAssertEqual(noVault.stdout, "")
        XCTAssertTrue(noVault.stderr.contains("error: the recipe declares the secret 'dispatch/ci', which cannot be read: vault_not_open: no vault in \(vault.folder.path): create one with `hubscript vault init`"), noVault.stderr)
        try vault.initialise()
        cli.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": vault.keyFile]
        let missing = try cli.run(["needs-secret.lua"], expect: 2)
        XCTAssertTrue(missing.stderr.contains("which cannot be read: secret_not_found: no vault entry 'dispatch/ci'"), missing.stderr)
        XCTAssertEqual(try cli.run(["runs", "list"], expect: 0).stdout.split(separator: "\n").count, 1, "only the header: no run recorded")
        XCTAssertEqual(try vault.run(["set", "dispatch/ci", "--key-file", vault.keyFile], stdin: "dsp_live_0123456789").status, 0)
        XCTAssertEqual(try cli.run(["needs-secret.lua"], expect: 0).stdout, "ran\n")
    }
}
