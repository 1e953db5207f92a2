import Foundation
import ScriptHost
import LuaSyntax
import RecipeCheck

/// What `hubscript check` found in one recipe file: a problem that stops the check
/// (unreadable file, Lua syntax error, bad manifest), or the static analysis's findings
/// in the recipe and in the modules it requires.
struct StaticCheckReport {
    /// A problem found before the analysis (the analysis did not run).
    var problem: String?
    /// The problem is an unknown permission in `needs` (exit 2).
    var isUnknownPermission = false
    var findings: [CheckFinding] = []

    var errors: Int { findings.filter { $0.severity == .error }.count }
    var warnings: Int { findings.filter { $0.severity == .warning }.count }
    var failed: Bool { problem != nil || errors > 0 }
}

/// Runs the checks of one recipe: Lua's own parser first (it judges syntax), then the
/// manifest and its `needs`, then the static analysis (`RecipeChecker`) of the recipe
/// and, through `require` with a literal name, of each module it loads, found as a run
/// finds them (the recipe's folder, `--lib` folders, the configuration's libraries).
struct StaticCheck {
    static let builtinModules: Set<String> = ["string", "table", "math", "utf8", "coroutine"]
    let checker: RecipeChecker
    /// The checker of recipe tests (`*_test.lua`), whose state has the test modules and
    /// not the Hub's; made when a test file is checked.
    let testChecker: () throws -> RecipeChecker
    let libraryFolders: [URL]
    /// The configuration's libraries, read when a module is not found in the folders.
    let libraries: () -> [ModuleLibrary]

    /// The check with the globals of a run (and, for recipe tests, of a test's state).
    /// - Throws: a `UsageError` if the runtime cannot list its globals.
    static func make(libraryFolders: [URL], libraries: @escaping () -> [ModuleLibrary]) throws -> StaticCheck {
        let globals: [String: GlobalShape]
        do { globals = try CheckGlobals.make() } catch { throw UsageError("\(error)") }
        let withheld = Set(CheckGlobals.luaGlobals).subtracting(globals.keys)
        // Listed once, when the first test file is checked.
        let testGlobals = OnFirstUse { Result { try CheckGlobals.make(plugins: CheckGlobals.testPlugins()) }.mapError { ScriptMessageError("\($0)") } }
        return StaticCheck(
            checker: RecipeChecker(globals: globals, withheld: withheld),
            testChecker: { RecipeChecker(globals: try testGlobals.value.get(), withheld: withheld) },
            libraryFolders: libraryFolders, libraries: libraries)
    }

    func check(path: String) -> StaticCheckReport {
        var report = StaticCheckReport()
        let file: RecipeFile
        do { file = try RecipeFile(path: path) } catch {
            report.problem = "\(error)"
            return report
        }
        if let syntax = ScriptRuntime.syntaxError(in: file) {
            report.problem = syntax
            return report
        }
        // A recipe test (docs/recipe-tests.md) has no manifest and its own modules.
        if path.hasSuffix("_test.lua") {
            do {
                guard let chunk = parse(file, into: &report) else { return report }
                let checker = try testChecker()
                let result = checker.check(chunk, file: file.displayPath, manifest: nil)
                report.findings += result.findings
                checkModules(result.requires, from: file, checker: checker, into: &report)
            } catch {
                report.problem = "\(error)"
            }
            return report
        }
        let manifest: RecipeManifest
        do { manifest = try RecipeManifest.load(from: file) } catch {
            report.problem = "\(error)"
            return report
        }
        if let unknown = NeedsCheck.problem(in: file, manifest: manifest) {
            report.problem = unknown
            report.isUnknownPermission = true
            return report
        }
        let facts = ManifestFacts(needs: manifest.needs, params: manifest.params.map(\.name))
        guard let chunk = parse(file, into: &report) else { return report }
        let result = checker.check(chunk, file: file.displayPath, manifest: facts)
        report.findings += result.findings
        var paramsRead = result.paramsRead
        var readsAllParams = result.readsAllParams

        let modules = checkModules(result.requires, from: file, checker: checker, into: &report)
        paramsRead.formUnion(modules.paramsRead)
        readsAllParams = readsAllParams || modules.readsAllParams

        if !readsAllParams {
            let positions = ManifestPositions.params(in: chunk)
            for param in manifest.params where !paramsRead.contains(param.name) {
                let at = positions[param.name] ?? SourcePosition(line: 1, column: 1)
                report.findings.append(CheckFinding(
                    file: file.displayPath, line: at.line, column: at.column, severity: .warning, code: "unused_param",
                    message: "parameter '\(param.name)' is declared in the manifest but never read (params.\(param.name))"))
            }
        }
        // The recipe's own findings first, then each module's, each in source order.
        let own = file.displayPath
        report.findings.sort { ($0.file == own ? 0 : 1, $0.file, $0.line, $0.column) < ($1.file == own ? 0 : 1, $1.file, $1.line, $1.column) }
        return report
    }

    /// Checks the modules `requires` names (and those they require), each once, breadth
    /// first; returns the parameters they read.
    @discardableResult
    private func checkModules(_ requires: [(name: String, position: SourcePosition)], from file: RecipeFile,
                              checker: RecipeChecker, into report: inout StaticCheckReport)
        -> (paramsRead: Set<String>, readsAllParams: Bool) {
        var paramsRead = Set<String>()
        var readsAllParams = false
        var resolver = ModuleResolver(folders: [file.url.deletingLastPathComponent()] + libraryFolders)
        var librariesLoaded = false
        var queue = requires.map { (name: $0.name, position: $0.position, from: file.displayPath) }
        var checked = Set<String>()
        while !queue.isEmpty {
            let request = queue.removeFirst()
            // `require` gives these the built-in library, never a file (the prelude's `loaded`).
            guard !Self.builtinModules.contains(request.name), checked.insert(request.name).inserted else { continue }
            var module: ModuleResolver.Module
            do {
                module = try resolver.resolve(request.name)
            } catch {
                if !librariesLoaded {
                    librariesLoaded = true
                    resolver = ModuleResolver(folders: resolver.folders, libraries: libraries())
                    if let found = try? resolver.resolve(request.name) { module = found } else {
                        report.findings.append(notFound(request, error))
                        continue
                    }
                } else {
                    report.findings.append(notFound(request, error))
                    continue
                }
            }
            guard case .string(let source) = module.source else { continue }
            let moduleFile = RecipeFile(displayPath: String(module.chunkName.dropFirst()),
                                        url: URL(fileURLWithPath: String(module.chunkName.dropFirst())), source: source)
            if let syntax = ScriptRuntime.syntaxError(in: moduleFile) {
                report.problem = syntax
                continue
            }
            guard let moduleChunk = parse(moduleFile, into: &report) else { continue }
            let result = checker.check(moduleChunk, file: moduleFile.displayPath, manifest: nil)
            report.findings += result.findings
            paramsRead.formUnion(result.paramsRead)
            readsAllParams = readsAllParams || result.readsAllParams
            queue += result.requires.map { (name: $0.name, position: $0.position, from: moduleFile.displayPath) }
        }
        return (paramsRead, readsAllParams)
    }

    private func notFound(_ request: (name: String, position: SourcePosition, from: String), _ error: Error) -> CheckFinding {
        CheckFinding(file: request.from, line: request.position.line, column: request.position.column, severity: .error,
                     code: "module_not_found", message: "\(error)")
    }

    /// The chunk, or nil with a warning when this parser cannot read what Lua accepted
    /// (then only the syntax and the manifest were checked).
    private func parse(_ file: RecipeFile, into report: inout StaticCheckReport) -> LuaChunk? {
        do { return try LuaParser.parse(file.source) } catch let error as LuaSyntaxError {
            report.findings.append(CheckFinding(
                file: file.displayPath, line: error.position.line, column: error.position.column, severity: .warning,
                code: "not_analysed", message: "the static check could not read this file (\(error.message)); only its syntax was checked"))
        } catch {
            report.findings.append(CheckFinding(file: file.displayPath, line: 1, column: 1, severity: .warning,
                                                code: "not_analysed", message: "\(error)"))
        }
        return nil
    }
}

/// Where the manifest declares each parameter: the `name = {…}` fields of
/// `params = {…}` in the top-level `recipe {…}` call.
enum ManifestPositions {
    static func params(in chunk: LuaChunk) -> [String: SourcePosition] {
        for statement in chunk.block.statements {
            guard case .call(.call(.name(let callee), let arguments, _)) = statement, callee.name == "recipe",
                  case .table(let fields, _)? = arguments.first else { continue }
            for case .named(let key, .table(let params, _)) in fields where key.name == "params" {
                var out: [String: SourcePosition] = [:]
                for case .named(let name, _) in params { out[name.name] = name.position }
                for case .keyed(.string(let name, let position), _) in params { out[name] = position }
                return out
            }
        }
        return [:]
    }
}
