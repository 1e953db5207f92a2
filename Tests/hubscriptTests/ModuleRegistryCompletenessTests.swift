import Foundation
import XCTest

/// The documented module registry (`hubscript docs modules`, docs/modules.md, the editor
/// definitions and `check`) lists exactly what a run installs: every module a recipe
/// sees, and every function in it, found by a recipe walking its own environment.
final class ModuleRegistryCompletenessTests: XCTestCase {
    /// Modules and functions as `hubscript docs modules` lists them.
    struct Documented {
        var modules: Set<String> = []
        var functions: Set<String> = []
    }

    static func documented(_ cli: CLIHarness) throws -> Documented {
        let done = try cli.hubscript("docs", "modules")
        XCTAssertEqual(done.status, 0, done.stderr)
        var documented = Documented()
        var module: String?
        for line in done.stdout.split(separator: "\n") {
            if line.hasPrefix("## ") { module = nil }
            if line.hasPrefix("## `"), let name = line.split(separator: "`").dropFirst().first {
                documented.modules.insert(String(name))
                module = String(name)
            }
            // Function rows of a module's table (the Globals table above them is not a module's).
            if let module, line.hasPrefix("| `"), let name = line.split(separator: "`").dropFirst().first,
               name.hasPrefix(module + ".") {
                documented.functions.insert(String(name))
            }
        }
        return documented
    }

    /// Every `module: "…"` a plugin declares anywhere in the sources: the candidates a
    /// recipe looks for (globals cannot be listed from inside the sandbox).
    static func declaredModuleNames() throws -> Set<String> {
        let sources = CLIHarness.repoRoot.appendingPathComponent("Sources")
        var names: Set<String> = []
        let files = FileManager.default.enumerator(at: sources, includingPropertiesForKeys: nil)
        let pattern = try NSRegularExpression(pattern: #"module: "([a-z_]+)""#)
        while let url = files?.nextObject() as? URL {
            guard url.pathExtension == "swift" else { continue }
            let text = try String(contentsOf: url, encoding: .utf8)
            for match in pattern.matches(in: text, range: NSRange(text.startIndex..., in: text)) {
                names.insert(String(text[Range(match.range(at: 1), in: text)!]))
            }
        }
        return names
    }

    /// The sandbox's own globals (docs/recipe-sandbox.md's allow-list), which are not modules.
    static func sandboxGlobals() throws -> Set<String> {
        let page = try String(contentsOf: CLIHarness.repoRoot.appendingPathComponent("docs/recipe-sandbox.md"), encoding: .utf8)
        let line = try XCTUnwrap(page.split(separator: "\n").first { $0.hasPrefix("globals: ") })
        return Set(line.dropFirst("globals: ".count).split(separator: " ").map(String.init))
    }

    func testARunInstallsExactlyTheDocumentedModulesAndFunctions() throws {
        let cli = try CLIHarness(testCase: self)
        let documented = try Self.documented(cli)
        let base = try Self.sandboxGlobals()
        let candidates = try Self.declaredModuleNames().union(documented.modules).union(["state", "vault", "dispatch"])
            .subtracting(base).sorted()
        let recipe = try cli.file("walk.lua", """
            recipe { name = "walk" }
            local found = {}
            local function walk(prefix, t, seen)
              for k, v in pairs(t) do
                if type(k) == "string" and string.sub(k, 1, 1) ~= "_" then
                  local name = prefix .. "." .. k
                  if type(v) == "function" then found[#found + 1] = name
                  elseif type(v) == "table" and not seen[v] then seen[v] = true; walk(name, v, seen) end
                end
              end
            end
            for _, name in ipairs { \(candidates.map { "\"\($0)\"" }.joined(separator: ", ")) } do
              local ok, value = pcall(function() return _ENV[name] end)
              if ok and value ~= nil then
                found[#found + 1] = "module " .. name
                if type(value) == "table" then walk(name, value, {}) end
              end
            end
            table.sort(found)
            for _, line in ipairs(found) do print(line) end
            """)
        let run = try cli.run([recipe, "--quiet"])
        XCTAssertEqual(run.status, 0, run.stderr)
        let lines = run.stdout.split(separator: "\n").map(String.init)
        let installedModules = Set(lines.filter { $0.hasPrefix("module ") }.map { String($0.dropFirst("module ".count)) })
        let installedFunctions = Set(lines.filter { !$0.hasPrefix("module ") })

        XCTAssertEqual(installedModules.subtracting(documented.modules).sorted(), [],
                       "modules a run installs that `hubscript docs modules` does not document")
        XCTAssertEqual(documented.modules.subtracting(installedModules).sorted(), [],
                       "documented modules a run does not install")
        XCTAssertEqual(installedFunctions.subtracting(documented.functions).sorted(), [],
                       "functions a run installs that `hubscript docs modules` does not document")
        XCTAssertEqual(documented.functions.subtracting(installedFunctions).sorted(), [],
                       "documented functions a run does not install")
        // The ones people missed: the vault, checkpoints and wrapper helpers.
        XCTAssertTrue(documented.functions.isSuperset(of: ["vault.secret", "state.get", "state.set", "json.isnull",
                                                           "json.array", "hub.sessions.revoke_all"]))
    }
}
