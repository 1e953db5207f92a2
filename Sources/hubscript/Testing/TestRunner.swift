import Foundation
import HubClient
import HubSandbox
import ScriptHost
import Configuration
import Synchronization

/// One case's outcome.
struct TestCaseResult: Sendable {
    let file: String
    let name: String
    let ok: Bool
    let message: String?
}

/// What one test file's run shares with its bindings: the sandboxes it made, where
/// recipes are found (relative to the test file), and where results go.
final class TestSession: @unchecked Sendable {
    let file: String
    let state: StateDirectory
    /// The configuration's libraries (pins checked), for the recipes the tests run.
    let libraries: [ModuleLibrary]
    private let sandboxes = Mutex<[TestSandbox]>([])
    private let reported = Mutex<[TestCaseResult]>([])
    var results: [TestCaseResult] { reported.withLock { $0 } }
    private let onResult: @Sendable (TestCaseResult) -> Void

    init(file: String, state: StateDirectory, libraries: [ModuleLibrary] = [],
         onResult: @escaping @Sendable (TestCaseResult) -> Void) {
        self.file = file
        self.state = state
        self.libraries = libraries
        self.onResult = onResult
        paths = TestPaths(testFile: file, libraries: libraries)
    }

    func report(name: String, ok: Bool, message: String?) {
        let result = TestCaseResult(file: file, name: name, ok: ok, message: message)
        reported.withLock { $0.append(result) }
        onResult(result)
    }

    /// Where the test's recipes and `file` parameters may be (its folder, or its library).
    let paths: TestPaths

    func newSandbox(_ options: ScriptValue) throws -> Int {
        let known: Set<String> = ["users", "audit_events", "fixtures", "as"]
        if case .object(let fields) = options, let unknown = fields.keys.sorted().first(where: { !known.contains($0) }) {
            throw ScriptMessageError("test.sandbox: unknown option '\(unknown)' (options: users, audit_events, fixtures, as)")
        }
        if !options["as"].isNil, options["as"].stringValue == nil {
            throw ScriptMessageError("test.sandbox: option 'as' must be the email of a sandbox user, such as \"admin@example.com\"")
        }
        let fixtures = try Self.fixtures(options["fixtures"])
        let sandbox: TestSandbox
        do {
            sandbox = try TestSandbox(users: Int(options["users"].intValue ?? 3),
                                      auditEvents: Int(options["audit_events"].intValue ?? 0),
                                      fixtures: fixtures, state: state, libraries: libraries, signIn: options["as"].stringValue)
        } catch let e as FixtureError {
            throw ScriptMessageError("test.sandbox: \(e.message)")
        }
        return sandboxes.withLock { sandboxes in
            sandboxes.append(sandbox)
            return sandboxes.count
        }
    }

    func sandbox(_ id: Int64) throws -> TestSandbox {
        try sandboxes.withLock { sandboxes in
            guard id >= 1, id <= sandboxes.count else { throw ScriptMessageError("not a sandbox made by test.sandbox") }
            return sandboxes[Int(id) - 1]
        }
    }

    static func fixtures(_ value: ScriptValue) throws -> FixtureRows {
        let tables = try TestPlugins.object(value, what: "fixtures")
        if let unknown = tables.keys.sorted().first(where: { !["users", "entitlements", "audit_events"].contains($0) }) {
            throw ScriptMessageError("test.sandbox: unknown fixtures table '\(unknown)' (tables: users, entitlements, audit_events)")
        }
        func rows(_ name: String) throws -> [[String: String]] {
            let list: [ScriptValue]
            switch tables[name] ?? .nilValue {
            case .nilValue: return []
            case .array(let items): list = items
            case .object(let o) where o.isEmpty: return []
            default: throw ScriptMessageError("fixtures.\(name) must be a list of tables")
            }
            return try list.enumerated().map { index, row in
                try TestPlugins.object(row, what: "fixtures.\(name)[\(index + 1)]").mapValues { value in
                    if case .object = value {
                        return try JSONCodec.encode(value)
                    }
                    return try TestPlugins.text(value, what: "fixtures.\(name)[\(index + 1)]")
                }
            }
        }
        return FixtureRows(users: try rows("users"), entitlements: try rows("entitlements"),
                           auditEvents: try rows("audit_events"))
    }
}

/// Finds and runs `*_test.lua` files.
enum TestRunner {
    /// `*_test.lua` files under `paths` (folders recursively, sorted, hidden folders
    /// skipped), in the order given.
    static func files(in paths: [String]) throws -> [String] {
        var found: [String] = []
        for path in paths {
            var isFolder: ObjCBool = false
            guard FileManager.default.fileExists(atPath: path, isDirectory: &isFolder) else {
                throw UsageError("no such file or folder: \(path)")
            }
            if !isFolder.boolValue { found.append(path); continue }
            let prefix = path == "." ? "" : path.hasSuffix("/") ? path : path + "/"
            found += LuaFiles.below(URL(fileURLWithPath: path, isDirectory: true))
                .filter { $0.hasSuffix("_test.lua") }.map { prefix + $0 }
        }
        return found
    }

    /// Runs one test file; the cases it reported (streamed to `onResult` as they end),
    /// and the error that ended the file early, if any.
    /// `libraries`: the configuration's, for `require` in the test file and in the
    /// recipes it runs.
    static func run(file: String, state: StateDirectory, libraries: [ModuleLibrary] = [],
                    onResult: @escaping @Sendable (TestCaseResult) -> Void) -> (cases: [TestCaseResult], error: String?) {
        let session = TestSession(file: file, state: state, libraries: libraries, onResult: onResult)
        let recipe: RecipeFile
        do {
            recipe = try RecipeFile(path: file)
            // A test kept in a library is that library's file: the library must match its pins.
            try LibraryRecipe.checkPin(recipe, libraries: libraries)
        } catch { return ([], "\(error)") }
        let output = MemoryOutput()
        var configuration = RunConfiguration(output: output)
        configuration.libraries = libraries
        configuration.plugins = [JSONPlugin.make(), LogPlugin.make(output: output), TimePlugin.make()]
            + TestPlugins.make(session: session)
        let report = ScriptRuntime.run(recipe, configuration: configuration)
        var error: String?
        if let failure = report.failure {
            let location = failure.location.map { $0 + ": " } ?? ""
            error = location + failure.message
        } else if session.results.isEmpty {
            error = "no test cases (declare them with test.case(\"name\", function() … end))"
        }
        return (session.results, error)
    }
}
