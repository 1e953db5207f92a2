import Foundation
import XCTest

/// `hubscript docs luals` (lua-language-server definitions) and the editor files
/// `hubscript new` writes (.luarc.json, .luacheckrc), checked mechanically: every
/// documented module and function is defined, the definitions parse as Lua 5.4, the
/// Hub object classes name the fields of docs/hub-objects.md, and Debian's luacheck
/// with the generated configuration reports the shipped recipes clean and a recipe's
/// mistakes as mistakes.
final class EditorDefinitionsTests: XCTestCase {
    /// A tool from the Debian packages scripts/test installs, or a skip when it is
    /// missing outside CI (under CI=true a missing tool is a failure).
    static func tool(_ path: String, package: String) throws -> String {
        if FileManager.default.isExecutableFile(atPath: path) { return path }
        if ProcessInfo.processInfo.environment["CI"] == "true" {
            XCTFail("\(path) is missing: apt-get install \(package) (scripts/test installs it)")
            throw XCTSkip("failed above")
        }
        throw XCTSkip("\(path) is missing: apt-get install \(package)")
    }

    /// Runs `executable args…` in `folder`; returns its exit status and stdout + stderr.
    static func exec(_ executable: String, _ args: [String], in folder: URL,
                     environment: [String: String]? = nil) throws -> (Int32, String) {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: executable)
        p.arguments = args
        p.currentDirectoryURL = folder
        if let environment { p.environment = environment }
        let out = Pipe()
        p.standardOutput = out
        p.standardError = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return (p.terminationStatus, String(decoding: data, as: UTF8.self))
    }

    func definitions(_ cli: CLIHarness) throws -> [String: String] {
        let folder = cli.root.appendingPathComponent("defs")
        let done = try cli.hubscript("docs", "luals", "--out", folder.path)
        XCTAssertEqual(done.status, 0, done.stderr)
        let names = try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted()
        XCTAssertEqual(done.stdout, "wrote \(names.count) definition files into \(folder.path)\n")
        var files: [String: String] = [:]
        for name in names { files[name] = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8) }
        return files
    }

    func testEveryDocumentedModuleAndFunctionHasADefinition() throws {
        let cli = try CLIHarness(testCase: self)
        let documented = try ModuleRegistryCompletenessTests.documented(cli)
        let files = try definitions(cli)
        XCTAssertEqual(Set(files.keys), Set(documented.modules.map { $0 + ".lua" }).union(["globals.lua", "types.lua", "test.lua"]))
        let all = files.values.joined(separator: "\n")
        let lines = Set(all.split(separator: "\n").map(String.init))
        for module in documented.modules.sorted() {
            XCTAssertTrue(lines.contains("\(module) = {}"), "no table for the module \(module)")
            XCTAssertTrue(files[module + ".lua"]?.hasPrefix("---@meta \(module)\n") == true, module)
        }
        XCTAssertFalse(documented.functions.isEmpty)
        for function in documented.functions.sorted() {
            XCTAssertTrue(all.contains("\nfunction \(function)("), "no definition of \(function)")
        }
        // Every parameter has a name from its signature (`arg2` would mean a summary the parser could not read).
        XCTAssertFalse(all.contains("---@param arg"), "a parameter without a name from its summary")
        // Every Hub binding says what it returns (a new binding needs its entry in HubObjectTypes.returns).
        for block in try XCTUnwrap(files["hub.lua"]).components(separatedBy: "\n\n") where block.contains("\nfunction hub.") {
            XCTAssertTrue(block.contains("---@return ") && !block.contains("---@return any"), "no return type in\n\(block)")
        }
        // Parameters and return values come from the summaries' signatures and the Hub's types.
        XCTAssertTrue(all.contains("""
            ---hub.users.get(id_or_email) -> user (an email is looked up exactly)
            ---
            ---Needs `users.list` in the manifest's needs.
            ---@param id_or_email string
            ---@return hub.User
            function hub.users.get(id_or_email) end
            """))
        XCTAssertTrue(all.contains("""
            ---@param user_id string
            ---@param fields? table
            ---@return hub.EntitlementList
            function hub.entitlements.for_user(user_id, fields) end
            """))
        XCTAssertTrue(all.contains("""
            ---@param id string
            ---@param opts? table
            ---@return hub.User
            function hub.users.suspend(id, opts) end
            """))
        XCTAssertTrue(all.contains("""
            ---@param message string
            ---@param fields? table
            function log.info(message, fields) end
            """))
        XCTAssertTrue(all.contains("""
            ---@param name string
            ---@return vault.Secret
            function vault.secret(name) end
            """))
        XCTAssertTrue(all.contains("""
            ---@param key string
            ---@param value any
            function state.set(key, value) end
            """))
        XCTAssertTrue(all.contains("---@class hub.UserList\n---@overload fun(): hub.User?\n"))
        XCTAssertTrue(all.contains("---@class hubscript.module.progress\n---@overload fun(total?: integer, label?: string): progress.Bar\n"))
        XCTAssertTrue(all.contains("\nfunction recipe(manifest) end\n"))
        // Recipe tests' globals, for *_test.lua files.
        for name in ["test.case", "test.sandbox", "test_Sandbox:run", "test_Sandbox:resume", "expect"] {
            XCTAssertTrue(all.contains("\nfunction \(name)("), name)
        }
    }

    func testTheDefinitionsParseAsLua54() throws {
        let luac = try Self.tool("/usr/bin/luac5.4", package: "lua5.4")
        let cli = try CLIHarness(testCase: self)
        _ = try definitions(cli)
        let folder = cli.root.appendingPathComponent("defs")
        for name in try FileManager.default.contentsOfDirectory(atPath: folder.path) {
            let (status, output) = try Self.exec(luac, ["-p", name], in: folder)
            XCTAssertEqual(status, 0, "\(name): \(output)")
        }
        let single = try cli.hubscript("docs", "luals")
        XCTAssertEqual(single.status, 0, single.stderr)
        XCTAssertTrue(single.stdout.hasPrefix("---@meta hubscript\n"))
        XCTAssertEqual(single.stdout.components(separatedBy: "---@meta").count, 2, "one ---@meta line")
        let path = try cli.file("single.lua", single.stdout)
        let (status, output) = try Self.exec(luac, ["-p", path], in: cli.root)
        XCTAssertEqual(status, 0, output)
        // The parser check itself fails on a broken file.
        let broken = try cli.file("broken.lua", "function hub.users.get(id end\n")
        XCTAssertNotEqual(try Self.exec(luac, ["-p", broken], in: cli.root).0, 0)
    }

    /// Each table of docs/hub-objects.md ("| field | type | null | what |") and the class
    /// that cites its section: the same fields, nullable (`|json.Null`) where the page says so.
    func testTheHubObjectClassesHaveTheFieldsOfHubObjectsMd() throws {
        let cli = try CLIHarness(testCase: self)
        let types = try XCTUnwrap(try definitions(cli)["types.lua"])
        let page = try String(contentsOf: CLIHarness.repoRoot.appendingPathComponent("docs/hub-objects.md"), encoding: .utf8)
        var sections: [String: [String: Bool]] = [:]
        var heading: String?
        for line in page.split(separator: "\n").map(String.init) {
            if line.hasPrefix("## ") { heading = String(line.dropFirst(3)); continue }
            guard let heading, line.hasPrefix("| `") else { continue }
            let cells = line.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard cells.count >= 3 else { continue }
            let names = cells[0].split(separator: ",").map { $0.trimmingCharacters(in: CharacterSet(charactersIn: " `")) }
            for name in names where cells[2] == "yes" || cells[2] == "no" { sections[heading, default: [:]][name] = cells[2] == "yes" }
        }
        XCTAssertGreaterThanOrEqual(sections.count, 8, "hub-objects.md's field tables were not found")
        let blocks = types.components(separatedBy: "\n\n")
        for (section, fields) in sections.sorted(by: { $0.key < $1.key }) {
            let block = try XCTUnwrap(blocks.first { $0.contains("---Fields: docs/hub-objects.md, \"\(section)\".") },
                                      "no class cites hub-objects.md's section \(section)")
            var declared: [String: (nullable: Bool, extra: Bool)] = [:]
            for line in block.split(separator: "\n") where line.hasPrefix("---@field ") && !line.hasPrefix("---@field [") {
                let parts = line.split(separator: " ")
                let name = String(parts[1])
                declared[name.hasSuffix("?") ? String(name.dropLast()) : name] = (parts[2].hasSuffix("|json.Null"), name.hasSuffix("?"))
            }
            for (field, nullable) in fields {
                let entry = try XCTUnwrap(declared[field], "\(section): the class lacks the field \(field)")
                XCTAssertEqual(entry.nullable, nullable, "\(section).\(field): nullable")
            }
            for (field, entry) in declared where !entry.extra {
                XCTAssertNotNil(fields[field], "\(section): \(field) is not in hub-objects.md's table")
            }
        }
    }

    func testNewWritesTheEditorFilesAndKeepsExistingOnesUnlessForced() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file(".luacheckrc", "-- mine\n")
        let first = try cli.hubscript("new", "sync-users")
        XCTAssertEqual(first.stdout, """
            created sync-users.lua
            created sync-users_test.lua
            wrote .hubscript/luals/ (lua-language-server definitions)
            created .luarc.json
            kept .luacheckrc: it exists (--force replaces it)
            next: edit sync-users.lua, then run hubscript test sync-users_test.lua

            """)
        XCTAssertEqual(first.status, 0, first.stderr)
        XCTAssertEqual(try String(contentsOf: cli.root.appendingPathComponent(".luacheckrc"), encoding: .utf8), "-- mine\n")
        let luarc = try XCTUnwrap(JSONSerialization.jsonObject(
            with: Data(contentsOf: cli.root.appendingPathComponent(".luarc.json"))) as? [String: Any])
        XCTAssertEqual(luarc["runtime.version"] as? String, "Lua 5.4")
        XCTAssertEqual(luarc["workspace.library"] as? [String], [".hubscript/luals"])
        XCTAssertEqual(luarc["runtime.builtin"] as? [String: String],
                       ["io": "disable", "os": "disable", "debug": "disable", "package": "disable"])
        let globals = try XCTUnwrap(luarc["diagnostics.globals"] as? [String])
        XCTAssertTrue(Set(globals).isSuperset(of: ["recipe", "hub", "params", "vault", "state", "test", "expect"]), "\(globals)")
        XCTAssertTrue(FileManager.default.fileExists(atPath: cli.root.appendingPathComponent(".hubscript/luals/hub.lua").path))

        let forced = try cli.hubscript("new", "ops-sync", "--force")
        XCTAssertEqual(forced.status, 0, forced.stderr)
        XCTAssertTrue(forced.stdout.contains("replaced .luarc.json (--force)\nreplaced .luacheckrc (--force)\n"), forced.stdout)
        XCTAssertTrue(try String(contentsOf: cli.root.appendingPathComponent(".luacheckrc"), encoding: .utf8)
            .contains("stds.hubscript = {"))
        // The recipe files themselves are never replaced, --force or not.
        let again = try cli.hubscript("new", "ops-sync", "--force")
        XCTAssertEqual(again.status, 1)
        XCTAssertEqual(again.stderr, "hubscript new: ops-sync.lua and ops-sync_test.lua already exist; nothing was written\n")
    }

    /// A `.hubscript` link in a cloned folder does not steer where the definitions go,
    /// and `--out` naming a file is refused, each with what to do.
    func testEditorFilesAreNeverWrittenThroughALinkOrOverAFile() throws {
        let cli = try CLIHarness(testCase: self)
        let elsewhere = cli.root.appendingPathComponent("elsewhere")
        try FileManager.default.createDirectory(at: elsewhere, withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: cli.root.appendingPathComponent(".hubscript").path,
                                                   withDestinationPath: elsewhere.path)
        let linked = try cli.hubscript("new", "probe")
        XCTAssertEqual(linked.status, 1)
        XCTAssertEqual(linked.stdout, "created probe.lua\ncreated probe_test.lua\n")
        XCTAssertEqual(linked.stderr, "hubscript new: probe.lua and probe_test.lua were created, but not the editor files: "
            + ".hubscript is a symbolic link; hubscript writes its definitions only into a folder of its own: remove the link and run again\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: elsewhere.path), [])

        let file = try cli.file("notes.txt", "mine\n")
        let overFile = try cli.hubscript("docs", "luals", "--out", file)
        XCTAssertEqual(overFile.status, 2)
        XCTAssertEqual(overFile.stdout, "")
        XCTAssertEqual(overFile.stderr, "hubscript docs: \(file) exists and is not a folder; give a folder for the definitions\n")
        XCTAssertEqual(try String(contentsOfFile: file, encoding: .utf8), "mine\n")
    }

    /// `docs luals --out` killed (-9) at many points: every definition file there is
    /// either absent or complete, never cut short, whatever the moment.
    func testAKilledWriteLeavesEachDefinitionFileWholeOrAbsent() throws {
        let cli = try CLIHarness(testCase: self)
        let reference = try definitions(cli)
        for attempt in 0..<24 {
            let folder = cli.root.appendingPathComponent("killed-\(attempt)")
            let scratch = cli.root.appendingPathComponent("scratch-\(attempt)")
            let process = CLIHarness.process(["docs", "luals", "--out", folder.path], in: cli.root,
                                             environment: try CLIHarness.isolatedEnvironment(scratch: scratch))
            process.standardOutput = FileHandle.nullDevice
            try process.run()
            usleep(useconds_t(40_000 + attempt * 4_000))
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
            for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasSuffix(".lua") {
                let text = try String(contentsOf: folder.appendingPathComponent(name), encoding: .utf8)
                XCTAssertEqual(text, reference[name], "\(name) after a kill at \(40_000 + attempt * 4_000) µs")
            }
            // A rerun finishes the folder and clears what the killed one left half-way.
            let rerun = try cli.hubscript("docs", "luals", "--out", folder.path)
            XCTAssertEqual(rerun.status, 0, rerun.stderr)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path).sorted(), reference.keys.sorted())
        }
    }

    /// The generated .luacheckrc, from `hubscript new` in a scratch folder.
    func luacheckConfig(_ cli: CLIHarness) throws -> String {
        let folder = cli.root.appendingPathComponent("scratch")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let done = try cli.hubscript("new", "scratch/probe")
        XCTAssertEqual(done.status, 0, done.stderr)
        return folder.appendingPathComponent(".luacheckrc").path
    }

    func testTheLuacheckConfigDeclaresExactlyTheSandboxAllowList() throws {
        let cli = try CLIHarness(testCase: self)
        let config = try String(contentsOfFile: try luacheckConfig(cli), encoding: .utf8)
        let page = try String(contentsOf: CLIHarness.repoRoot.appendingPathComponent("docs/recipe-sandbox.md"), encoding: .utf8)
        let block = try XCTUnwrap(page.components(separatedBy: "```allow-list\n").dropFirst().first?
            .components(separatedBy: "```").first)
        for line in block.split(separator: "\n") {
            let parts = line.split(separator: ":", maxSplits: 1)
            let names = parts[1].split(separator: " ").map { "\"\($0)\"" }
            if parts[0] == "globals" {
                for name in names {
                    let bare = name.dropFirst().dropLast()
                    XCTAssertTrue(config.contains("    \(name),\n") || config.contains("    \(bare) = { fields = "),
                                  "the .luacheckrc lacks the global \(name)")
                }
            } else {
                XCTAssertTrue(config.contains("    \(parts[0]) = { fields = { \(names.joined(separator: ", ")) } },\n"),
                              "the .luacheckrc's fields of \(parts[0]) differ from the allow-list")
            }
        }
    }

    func testLuacheckWithTheConfigReportsTheShippedRecipesClean() throws {
        let luacheck = try Self.tool("/usr/bin/luacheck", package: "lua-check")
        let cli = try CLIHarness(testCase: self)
        let config = try luacheckConfig(cli)
        let recipes = CLIHarness.repoRoot.appendingPathComponent("recipes")
        let (status, output) = try Self.exec(luacheck, ["--config", config, "--no-color", "--codes", "."], in: recipes)
        XCTAssertEqual(status, 0, output)
        XCTAssertTrue(output.contains(" 0 warnings / 0 errors in "), output)
        XCTAssertTrue(output.contains("Checking lib/util.lua "), output)
        XCTAssertTrue(output.contains("Checking offboard_test.lua "), output)
    }

    /// The same configuration catches what a recipe must not do: an undeclared global
    /// (read or written), a misspelt module function, a write to a module, a library
    /// the sandbox does not have, and test globals outside a test.
    func testLuacheckWithTheConfigReportsARecipesMistakes() throws {
        let luacheck = try Self.tool("/usr/bin/luacheck", package: "lua-check")
        let cli = try CLIHarness(testCase: self)
        let config = try luacheckConfig(cli)
        try cli.file("mistakes/bad.lua", """
            recipe { name = "bad", needs = { "users.list" } }
            count = 0
            print(cuont)
            for u in hub.users.lst{} do print(u.id) end
            hub.users = nil
            io.write("x")
            print(string.dump, os.getenv("HOME"), json.nul)
            test.case("x", function() end)
            print(params.user, vault.secret("k"), state.get("k"), hub.sessions.revoke_all("u"), json.isnull(json.null))

            """)
        let (status, output) = try Self.exec(luacheck, ["--config", config, "--no-color", "--codes", "bad.lua"],
                                             in: cli.root.appendingPathComponent("mistakes"))
        XCTAssertEqual(status, 1, output)
        let warnings = output.split(separator: "\n").filter { $0.hasPrefix("    bad.lua:") }
            .map { $0.trimmingCharacters(in: .whitespaces) }
        XCTAssertEqual(warnings, [
            "bad.lua:2:1: (W111) setting non-standard global variable 'count'",
            "bad.lua:3:7: (W113) accessing undefined variable 'cuont'",
            "bad.lua:4:10: (W143) accessing undefined field 'users.lst' of global 'hub'",
            "bad.lua:5:1: (W122) setting read-only field 'users' of global 'hub'",
            "bad.lua:6:1: (W113) accessing undefined variable 'io'",
            "bad.lua:7:7: (W143) accessing undefined field 'dump' of global 'string'",
            "bad.lua:7:20: (W143) accessing undefined field 'getenv' of global 'os'",
            "bad.lua:7:39: (W143) accessing undefined field 'nul' of global 'json'",
            "bad.lua:8:1: (W113) accessing undefined variable 'test'",
        ], output)
    }
}
