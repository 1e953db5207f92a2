import Foundation
import ScriptHost
import SystemText

/// Where a recipe test may reach on disk. `hubscript test` on a shared library must be
/// as safe as running its recipes, so a test names recipes and `file` parameters
/// relative to its own file, and each must lie in the test's folder (or below it) — or,
/// for a test kept inside a configured library, anywhere in that library (a `tests/`
/// folder beside the recipes). Links are resolved before the check: a link in the
/// folder that points out of it is refused like `../`. Absolute paths are refused.
struct TestPaths: Sendable {
    /// The test file's path as given (messages and relative recipe paths keep its form).
    let testFile: String
    /// The folders a test may reach, real paths (links resolved): the test's folder,
    /// then its library's folder when it is inside one.
    let roots: [String]
    /// How the roots read in messages: "the test's folder (/real/tests)" …
    private let shownRoots: String

    init(testFile: String, libraries: [ModuleLibrary]) {
        self.testFile = testFile
        let folder = Self.realPath(Self.joined(AbsolutePath.currentDirectory(),
                                                (testFile as NSString).deletingLastPathComponent))
        var roots = [folder]
        var shown = "the test's folder (\(folder))"
        for library in libraries {
            let root = Self.realPath(library.folder.path)
            if folder == root || folder.hasPrefix(root + "/") {
                roots.append(root)
                shown += " or its library \(library.name) (\(root))"
                break
            }
        }
        self.roots = roots
        shownRoots = shown
    }

    /// A recipe path as `s:run` names it, relative to the test file: the path to run
    /// (kept relative when the test file's is, so messages read `recipes/x.lua:3:`).
    /// - Throws: `ScriptMessageError` for an absolute path, or one that leads out of the
    ///   roots.
    func recipe(_ path: String) throws -> String {
        guard !path.hasPrefix("/") else {
            throw ScriptMessageError("s:run: recipe \(path) is an absolute path; name the recipe relative to the test file, inside \(shownRoots)")
        }
        let resolved = relativeToTest(path)
        guard contains(resolved) else {
            throw ScriptMessageError("s:run: recipe \(path) is outside \(shownRoots); a recipe test runs only the recipes there")
        }
        return resolved
    }

    /// A `file` parameter's value (`name`: the parameter), relative to the test file:
    /// the path the recipe reads.
    /// - Throws: `ScriptMessageError` for an absolute path, or one that leads out of the roots.
    func file(_ value: String, parameter name: String) throws -> String {
        let fix = "give a path relative to the test file, inside \(shownRoots)"
        guard !value.hasPrefix("/") else {
            throw ScriptMessageError("s:run: parameter '\(name)' (\(value)) is an absolute path; \(fix)")
        }
        let resolved = relativeToTest(value)
        guard contains(resolved) else {
            throw ScriptMessageError("s:run: parameter '\(name)' (\(value)) is outside \(shownRoots); a recipe test reads only files there; \(fix)")
        }
        return resolved
    }

    /// `path` joined to the test file's folder.
    private func relativeToTest(_ path: String) -> String {
        let folder = (testFile as NSString).deletingLastPathComponent
        return folder.isEmpty ? path : folder + "/" + path
    }

    /// Whether `path` (relative to the working directory, or absolute), its links
    /// resolved, lies inside one of the roots.
    func contains(_ path: String) -> Bool {
        let real = Self.realPath(Self.joined(AbsolutePath.currentDirectory(), path))
        return roots.contains { real == $0 || real.hasPrefix($0 == "/" ? "/" : $0 + "/") }
    }

    static func joined(_ base: String, _ path: String) -> String {
        if path.hasPrefix("/") { return path }
        if path.isEmpty { return base }
        return base.hasSuffix("/") ? base + path : base + "/" + path
    }

    /// `path` with `.`, `..` and every link resolved: `realpath(3)` of the longest part
    /// that exists, then the rest taken lexically (a file not made yet cannot be a link).
    static func realPath(_ path: String) -> String {
        if let resolved = realpath(path, nil) {
            defer { free(resolved) }
            return String(cString: resolved)
        }
        let parent = (path as NSString).deletingLastPathComponent
        let last = (path as NSString).lastPathComponent
        guard !parent.isEmpty, parent != path else { return path }
        let base = realPath(parent)
        switch last {
        case ".", "": return base
        case "..": return (base as NSString).deletingLastPathComponent
        default: return base == "/" ? "/" + last : base + "/" + last
        }
    }
}
