import Foundation
import HubClient
import ScriptHost
import SystemText
import RunJournal

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
        /// The Dispatch targets the manifest names (`targets = { "ops" }`).
        public var targets: [String] = []
        public var limits: [String: String] = [:]
    }

    /// By `library/relative/path.lua`.
    public var pins: [String: Pin] = [:]

    public init(pins: [String: Pin] = [:]) { self.pins = pins }

    public static func url(besideConfig config: URL) -> URL {
        config.deletingLastPathComponent().appendingPathComponent("hubscript.lock")
    }

    /// The files of `libraries` as they are now.
    /// - Throws: `HubConfigError` for a `.lua` file that `require` could never load — a
    ///   link out of its library, a device or FIFO, a file over
    ///   `ModuleResolver.maxModuleBytes` — before any of it is read.
    public static func current(_ libraries: [ModuleLibrary]) throws -> LibraryLock {
        var lock = LibraryLock()
        for library in libraries {
            for relative in LuaFiles.below(library.folder) {
                let url = library.folder.appendingPathComponent(relative)
                lock.pins[library.name + "/" + relative] = pin(of: try readable(url, in: library, relative: relative), url: url)
            }
        }
        return lock
    }

    /// The bytes of a library file, if it is a regular file of a module's size inside
    /// the library's folder (links resolved).
    static func readable(_ url: URL, in library: ModuleLibrary, relative: String) throws -> Data {
        let folder = library.folder.standardizedFileURL.resolvingSymlinksInPath().path
        let real = url.standardizedFileURL.resolvingSymlinksInPath()
        func refuse(_ why: String) -> HubConfigError {
            HubConfigError("library \(library.name): \(relative) \(why); remove it from the library (require could never load it)")
        }
        guard real.path.hasPrefix(folder + "/") else { throw refuse("is a link out of the library's folder (to \(real.path))") }
        let attributes = try? FileManager.default.attributesOfItem(atPath: real.path)
        guard attributes?[.type] as? FileAttributeType == .typeRegular else { throw refuse("is not a regular file") }
        let size = (attributes?[.size] as? NSNumber)?.intValue ?? 0
        guard size <= ModuleResolver.maxModuleBytes else {
            throw refuse("is \(size) bytes, over the \(ModuleResolver.maxModuleBytes >> 20) MiB a module may be")
        }
        do { return try Data(contentsOf: real) } catch {
            throw HubConfigError("library \(library.name): cannot read \(relative): \(FileErrorText.reason(error))")
        }
    }

    static func pin(of data: Data, url: URL) -> Pin {
        var pin = Pin(sha256: Digest.sha256Hex(data))
        if let text = String(data: data, encoding: .utf8),
           let manifest = try? RecipeManifest.load(from: RecipeFile(displayPath: url.path, url: url, source: text)) {
            pin.needs = manifest.needs.sorted()
            pin.secrets = manifest.secrets.sorted()
            pin.targets = manifest.targets.sorted()
            let l = manifest.limits
            if let w = l.writes { pin.limits["writes"] = String(w) }
            if let t = l.timeoutSeconds { pin.limits["timeout"] = t == t.rounded() ? String(Int(t)) : String(t) }
            if let m = l.memoryMB { pin.limits["memory_mb"] = String(m) }
            if let i = l.instructions { pin.limits["instructions"] = String(i) }
        }
        return pin
    }

    // MARK: The file

    /// The longest lock file read: 64 MiB (a pin is about 250 bytes).
    public static let maxBytes = 64 << 20

    /// The lock at `url`; nil when there is none. A lock that is not a regular file (a
    /// link to `/dev/zero` or to a terminal in a cloned folder) or is longer than
    /// `maxBytes` is refused before it is read: reading it would never end, or fill the
    /// memory.
    public static func read(_ url: URL) throws -> LibraryLock? {
        guard FileManager.default.fileExists(atPath: url.path) else { return nil }
        var info = stat()
        guard stat(url.path, &info) == 0, (info.st_mode & S_IFMT) == S_IFREG else {
            throw HubConfigError("\(url.path) is not a regular file; remove it and write it again with hubscript trust")
        }
        let value: ScriptValue
        do {
            value = try JSONCodec.decode(Data(try FileBytes.read(url.path, atMost: maxBytes)))
        } catch is FileBytes.TooLong {
            throw HubConfigError("\(url.path) is longer than \(maxBytes >> 20) MiB, more than a lock file holds; write it again with hubscript trust")
        } catch {
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
            if case .array(let t) = entry["targets"] { pin.targets = t.compactMap(\.stringValue) }
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
                                   "targets": .array(pin.targets.map(ScriptValue.string)),
                                   "limits": .object(pin.limits.mapValues(ScriptValue.string))])
        }
        let text = try JSONCodec.encode(.object(["version": 1, "files": .object(files)]))
        try Data((text + "\n").utf8).write(to: url, options: .atomic)
    }

    // MARK: Differences

    /// One difference between the trusted pins and the files now.
    public struct Change: Sendable, Equatable {
        public enum Kind: String, Sendable { case added, changed, removed }
        public let kind: Kind
        /// `library/relative/path.lua`.
        public let path: String
        /// The trusted pin (nil: added) and the file now (nil: removed).
        public let trusted: Pin?
        public let now: Pin?

        /// What the new manifest asks for beyond the trusted one: permissions, secrets,
        /// and limits that changed (`(now, was)`; nil `now`: the limit was dropped).
        public var addedNeeds: [String] { (now?.needs ?? []).filter { !(trusted?.needs.contains($0) ?? false) } }
        public var addedSecrets: [String] { (now?.secrets ?? []).filter { !(trusted?.secrets.contains($0) ?? false) } }
        /// Destinations the new manifest can reach that the trusted one could not.
        public var addedTargets: [String] { (now?.targets ?? []).filter { !(trusted?.targets.contains($0) ?? false) } }
        public var changedLimits: [(name: String, now: String?, was: String?)] {
            guard let now else { return [] }
            let names = Set(now.limits.keys).union(trusted.map { Array($0.limits.keys) } ?? []).sorted()
            return names.compactMap { name in
                let (new, old) = (now.limits[name], trusted?.limits[name])
                return new == old ? nil : (name, new, old)
            }
        }

        /// The change in words, one line: `changed: ops/x.lua (sha256 9d2a563bf81e…, now
        /// 713faaf1cd5f…); the new manifest adds: needs users.manage; …`.
        public var line: String {
            switch kind {
            case .added: return "added: \(path)" + asks
            case .removed: return "removed: \(path)"
            case .changed:
                return "changed: \(path) (sha256 \(trusted!.sha256.prefix(12))…, now \(now!.sha256.prefix(12))…)" + asks
            }
        }

        /// "; the new manifest adds: needs users.manage; reads the secret dispatch/ci; limit writes 10 (was 5)".
        var asks: String {
            var parts: [String] = []
            if !addedNeeds.isEmpty { parts.append("needs \(addedNeeds.joined(separator: ", "))") }
            let secrets = addedSecrets
            if !secrets.isEmpty { parts.append("reads the secret\(secrets.count == 1 ? "" : "s") \(secrets.joined(separator: ", "))") }
            let targets = addedTargets
            if !targets.isEmpty { parts.append("sends to the Dispatch target\(targets.count == 1 ? "" : "s") \(targets.joined(separator: ", "))") }
            for limit in changedLimits where limit.now != nil {
                parts.append("limit \(limit.name) \(limit.now!)" + (limit.was.map { " (was \($0))" } ?? ""))
            }
            for limit in changedLimits where limit.now == nil {
                parts.append("no limit \(limit.name) (was \(limit.was!))")
            }
            guard !parts.isEmpty else { return "" }
            return "; the new manifest " + (trusted == nil ? "asks for: " : "adds: ") + parts.joined(separator: "; ")
        }

        /// The change as `--json` fields: `change`, `file`, `sha256` (now, null when
        /// removed), `trusted_sha256` (null when added), `adds` (`needs`, `secrets`,
        /// `targets`, `limits`: name → `{ now, was }`), and `summary`, the line in words.
        public var jsonValue: ScriptValue {
            var limits: [String: ScriptValue] = [:]
            for limit in changedLimits {
                limits[limit.name] = .object(["now": limit.now.map(ScriptValue.string) ?? .null,
                                              "was": limit.was.map(ScriptValue.string) ?? .null])
            }
            return .object([
                "change": .string(kind.rawValue), "file": .string(path),
                "sha256": now.map { .string($0.sha256) } ?? .null,
                "trusted_sha256": trusted.map { .string($0.sha256) } ?? .null,
                "adds": .object(["needs": .array(addedNeeds.map(ScriptValue.string)),
                                 "secrets": .array(addedSecrets.map(ScriptValue.string)),
                                 "targets": .array(addedTargets.map(ScriptValue.string)), "limits": .object(limits)]),
                "summary": .string(line),
            ])
        }
    }

    /// What changed from `self` (the trusted pins) to `now`, sorted by path; only the
    /// libraries named in `libraries` (all when nil). Empty: nothing changed.
    public func differences(to now: LibraryLock, libraries: Set<String>? = nil) -> [Change] {
        func included(_ path: String) -> Bool {
            libraries.map { $0.contains(String(path.prefix { $0 != "/" })) } ?? true
        }
        var changes: [Change] = []
        for path in Set(pins.keys).union(now.pins.keys).sorted() where included(path) {
            switch (pins[path], now.pins[path]) {
            case (nil, let new?): changes.append(Change(kind: .added, path: path, trusted: nil, now: new))
            case (let old?, nil): changes.append(Change(kind: .removed, path: path, trusted: old, now: nil))
            case (let old?, let new?) where old.sha256 != new.sha256:
                changes.append(Change(kind: .changed, path: path, trusted: old, now: new))
            default: break
            }
        }
        return changes
    }

    /// `differences`, one line each.
    public func changes(to now: LibraryLock, libraries: Set<String>? = nil) -> [String] {
        differences(to: now, libraries: libraries).map(\.line)
    }
}
