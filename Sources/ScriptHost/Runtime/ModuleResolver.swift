import Foundation

/// Resolves `require` names to Lua source files in the allowed folders only.
///
/// A name is dot-separated identifiers (`lib.users` → `lib/users.lua`, or
/// `lib/users/init.lua`). The file's real path (links resolved) must stay inside the
/// folder it was found in; binary chunks are refused.
public struct ModuleResolver: Sendable {
    public let folders: [URL]
    /// Named libraries (the configuration's `libraries`): `require("ops.x")` finds
    /// `x.lua` in library `ops`'s folder, after the folders.
    public let libraries: [ModuleLibrary]
    /// The largest module file `require` reads (a module is code, not data).
    public static let maxModuleBytes = 8 << 20

    public init(folders: [URL], libraries: [ModuleLibrary] = []) {
        self.folders = folders.map { $0.standardizedFileURL.resolvingSymlinksInPath() }
        self.libraries = libraries.map {
            ModuleLibrary(name: $0.name, folder: $0.folder.standardizedFileURL.resolvingSymlinksInPath(), check: $0.check,
                          checkWhole: $0.checkWhole)
        }
    }

    public struct Module: Sendable {
        public let source: ScriptValue
        public let chunkName: String
    }

    public func resolve(_ name: String) throws -> Module {
        let valid = name.split(separator: ".", omittingEmptySubsequences: false).allSatisfy { part in
            guard let first = part.first, first.isLetter || first == "_" else { return false }
            return part.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber || $0 == "_" || $0 == "-") }
        }
        guard valid else {
            throw ScriptMessageError(
                "require: '\(name)' is not a module name (use dot-separated names like 'lib.users'; paths are not allowed)")
        }
        let relative = name.replacingOccurrences(of: ".", with: "/")
        var places = folders.map { (folder: $0, relative: relative, library: ModuleLibrary?.none) }
        let parts = name.split(separator: ".", maxSplits: 1).map(String.init)
        if parts.count == 2 {
            for library in libraries where library.name == parts[0] {
                places.append((library.folder, parts[1].replacingOccurrences(of: ".", with: "/"), library))
            }
        }
        var tried: [String] = []
        for (folder, relative, library) in places {
            for candidate in ["\(relative).lua", "\(relative)/init.lua"] {
                let url = folder.appendingPathComponent(candidate).resolvingSymlinksInPath()
                tried.append(folder.appendingPathComponent(candidate).path)
                guard FileManager.default.fileExists(atPath: url.path) else { continue }
                guard url.path.hasPrefix(folder.path + "/") else {
                    throw ScriptMessageError("require: '\(name)' resolves outside the library folder \(folder.path)")
                }
                let data = try read(url, module: name)
                // A module found through a plain folder that lies inside a library (a
                // library recipe's own folder) is that library's file: its pin applies.
                if let library {
                    try library.check?(candidate, data)
                } else if let owner = libraries.first(where: { url.path.hasPrefix($0.folder.path + "/") }) {
                    try owner.check?(String(url.path.dropFirst(owner.folder.path.count + 1)), data)
                }
                if data.first == 0x1B {
                    throw ScriptMessageError("require: '\(name)' (\(displayPath(url))) is a binary chunk; only Lua source text can be loaded")
                }
                let source: ScriptValue = String(data: data, encoding: .utf8).map { .string($0) } ?? .bytes(Array(data))
                return Module(source: source, chunkName: "@" + displayPath(url))
            }
        }
        throw ScriptMessageError("require: module '\(name)' not found; searched:\n\t" + tried.joined(separator: "\n\t"))
    }

    func displayPath(_ url: URL) -> String { DisplayPath.relative(url) }

    /// Reads a module file: a regular file of at most `maxModuleBytes`, checked before
    /// anything is read (a huge file or a FIFO never reaches memory or blocks the run).
    private func read(_ url: URL, module name: String) throws -> Data {
        let attributes = try? FileManager.default.attributesOfItem(atPath: url.path)
        guard attributes?[.type] as? FileAttributeType == .typeRegular else {
            throw ScriptMessageError("require: '\(name)' (\(displayPath(url))) is not a regular file")
        }
        let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
        guard size <= Self.maxModuleBytes else {
            throw ScriptMessageError("require: '\(name)' (\(displayPath(url))) is \(size) bytes; a module may be at most \(Self.maxModuleBytes >> 20) MiB")
        }
        do { return try Data(contentsOf: url) } catch {
            throw ScriptMessageError("require: cannot read '\(name)' (\(displayPath(url))): \(RecipeFile.reason(error))")
        }
    }
}

/// A library of the configuration: `name` prefixes the modules found in `folder`.
public struct ModuleLibrary: Sendable {
    public let name: String
    public let folder: URL
    /// Called with a module's path inside `folder` and its bytes before it is loaded;
    /// throws to refuse it (a file that no longer matches its pin).
    public let check: (@Sendable (String, Data) throws -> Void)?
    /// Called before a recipe of this library runs: checks every file of the library
    /// (the recipe's own library is checked whole at start; other libraries only module
    /// by module, as `require` loads them). Throws to refuse the run.
    public let checkWhole: (@Sendable () throws -> Void)?
    public init(name: String, folder: URL, check: (@Sendable (String, Data) throws -> Void)? = nil,
                checkWhole: (@Sendable () throws -> Void)? = nil) {
        self.name = name
        self.folder = folder
        self.check = check
        self.checkWhole = checkWhole
    }
}

/// Paths as users see them: relative to the working directory when inside it.
public enum DisplayPath {
    public static func relative(_ url: URL) -> String {
        let cwd = URL(fileURLWithPath: FileManager.default.currentDirectoryPath).standardizedFileURL
            .resolvingSymlinksInPath().path
        let path = url.standardizedFileURL.resolvingSymlinksInPath().path
        if path.hasPrefix(cwd + "/") { return String(path.dropFirst(cwd.count + 1)) }
        return path
    }
}
