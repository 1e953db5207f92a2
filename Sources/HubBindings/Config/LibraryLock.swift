import Foundation
import HubClient
import ScriptHost

/// `hubscript.lock`, beside the configuration file: the SHA-256 of every `.lua` file of
/// every library, and what each recipe among them asks for (needs, secrets, limits),
/// written by `hubscript trust`, checked by `hubscript verify` and before a library
/// module is loaded.
public struct LibraryLock: Sendable, Equatable {
    /// A pinned file: its digest and, for a recipe (a file with a manifest), what its
    /// manifest asks for.
    public struct Pin: Sendable, Equatable {
        public var sha256: String
        public var needs: [String] = []
        public var secrets: [String] = []
        public var limits: [String: String] = [:]
    }

    /// By `library/relative/path.lua`.
    public var pins: [String: Pin] = [:]

    public init(pins: [String: Pin] = [:]) { self.pins = pins }

    public static func url(besideConfig config: URL) -> URL {
        config.deletingLastPathComponent().appendingPathComponent("hubscript.lock")
    }

    /// The files of `libraries` as they are now.
    public static func current(_ libraries: [ModuleLibrary]) throws -> LibraryLock {
        var lock = LibraryLock()
        for library in libraries {
            for relative in LuaFiles.below(library.folder) {
                let url = library.folder.appendingPathComponent(relative)
                lock.pins[library.name + "/" + relative] = pin(of: try Data(contentsOf: url), url: url)
            }
        }
        return lock
    }

    static func pin(of data: Data, url: URL) -> Pin {
        var pin = Pin(sha256: Digest.sha256Hex(data))
        if let text = String(data: data, encoding: .utf8),
           let manifest = try? RecipeManifest.load(from: RecipeFile(displayPath: url.path, url: url, source: text)) {
            pin.needs = manifest.needs.sorted()
            pin.secrets = manifest.secrets.sorted()
            let l = manifest.limits
            if let w = l.writes { pin.limits["writes"] = String(w) }
            if let t = l.timeoutSeconds { pin.limits["timeout"] = t == t.rounded() ? String(Int(t)) : String(t) }
            if let m = l.memoryMB { pin.limits["memory_mb"] = String(m) }
            if let i = l.instructions { pin.limits["instructions"] = String(i) }
        }
        return pin
    }

    // MARK: The file

    public static func read(_ url: URL) throws -> LibraryLock? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        let value: ScriptValue
        do { value = try JSONCodec.decode(try Data(contentsOf: url)) } catch {
            throw HubConfigError("\(url.path) is not a hubscript lock file (\(error)); write it again with hubscript trust")
        }
        var lock = LibraryLock()
        guard case .object(let files) = value["files"] else {
            throw HubConfigError("\(url.path) is not a hubscript lock file (no files); write it again with hubscript trust")
        }
        for (path, entry) in files {
            guard let sha = entry["sha256"].stringValue else { continue }
            var pin = Pin(sha256: sha)
            if case .array(let n) = entry["needs"] { pin.needs = n.compactMap(\.stringValue) }
            if case .array(let s) = entry["secrets"] { pin.secrets = s.compactMap(\.stringValue) }
            if case .object(let l) = entry["limits"] { pin.limits = l.compactMapValues(\.stringValue) }
            lock.pins[path] = pin
        }
        return lock
    }

    public func write(to url: URL) throws {
        var files: [String: ScriptValue] = [:]
        for (path, pin) in pins {
            files[path] = .object(["sha256": .string(pin.sha256), "needs": .array(pin.needs.map(ScriptValue.string)),
                                   "secrets": .array(pin.secrets.map(ScriptValue.string)),
                                   "limits": .object(pin.limits.mapValues(ScriptValue.string))])
        }
        let text = try JSONCodec.encode(.object(["version": 1, "files": .object(files)]))
        try Data((text + "\n").utf8).write(to: url, options: .atomic)
    }

    // MARK: Differences

    /// What changed from `self` (the trusted pins) to `now`, in words, one line each;
    /// only the libraries named in `libraries` (all when nil). Empty: nothing changed.
    public func changes(to now: LibraryLock, libraries: Set<String>? = nil) -> [String] {
        func included(_ path: String) -> Bool {
            libraries.map { $0.contains(String(path.prefix { $0 != "/" })) } ?? true
        }
        var lines: [String] = []
        for path in Set(pins.keys).union(now.pins.keys).sorted() where included(path) {
            switch (pins[path], now.pins[path]) {
            case (nil, let new?):
                lines.append("added: \(path)" + Self.asks(new, comparedTo: nil))
            case (_?, nil):
                lines.append("removed: \(path)")
            case (let old?, let new?) where old.sha256 != new.sha256:
                lines.append("changed: \(path) (sha256 \(old.sha256.prefix(12))…, now \(new.sha256.prefix(12))…)"
                             + Self.asks(new, comparedTo: old))
            default:
                break
            }
        }
        return lines
    }

    /// "; it now also needs users.manage; secrets: dispatch/ci; limits: writes 10 (was 5)".
    static func asks(_ new: Pin, comparedTo old: Pin?) -> String {
        var parts: [String] = []
        let needs = new.needs.filter { !(old?.needs.contains($0) ?? false) }
        if !needs.isEmpty { parts.append("needs \(needs.joined(separator: ", "))") }
        let secrets = new.secrets.filter { !(old?.secrets.contains($0) ?? false) }
        if !secrets.isEmpty { parts.append("reads the secret\(secrets.count == 1 ? "" : "s") \(secrets.joined(separator: ", "))") }
        for key in new.limits.keys.sorted() where old?.limits[key] != new.limits[key] {
            parts.append("limit \(key) \(new.limits[key]!)" + (old?.limits[key].map { " (was \($0))" } ?? ""))
        }
        for key in (old?.limits.keys.sorted() ?? []) where new.limits[key] == nil {
            parts.append("no limit \(key) (was \(old!.limits[key]!))")
        }
        guard !parts.isEmpty else { return "" }
        return "; the new manifest " + (old == nil ? "asks for: " : "adds: ") + parts.joined(separator: "; ")
    }
}
