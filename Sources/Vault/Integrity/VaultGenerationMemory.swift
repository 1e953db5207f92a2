import Foundation
import SHA256Kit

/// What this machine remembers of each vault it opened: the highest generation it
/// saw (docs/vault-format.md, "Rollback"). A vault whose file is at a lower generation
/// than remembered was replaced by an older copy of itself as a whole.
///
/// One file per vault, `<folder>/<vault id in hex>`, mode 0600 in a 0700 folder, one
/// line: `<vault id> <generation> <check>` where `check` is the first 16 hex digits of
/// the SHA-256 of `"hubscript-vault-generation\0<vault id> <generation>"` (so a damaged
/// file is told from one that names a generation). Written atomically (temporary file,
/// fsync, rename, folder fsync) and only ever raised: a generation is remembered after
/// the vault file that holds it is durable, so a crash can leave the memory behind the
/// file, never ahead of it.
public struct VaultGenerationMemory: Sendable {
    /// The folder holding the files (created 0700 on first write).
    public let folder: URL

    public init(folder: URL) { self.folder = folder }

    static let checkDomain = "hubscript-vault-generation\u{0}"
    static let maxFileBytes = 256

    func path(vaultID: [UInt8]) -> String { folder.appendingPathComponent(Sodium.hex(vaultID)).path }

    /// The generation remembered for the vault `vaultID`, nil if none. Throws
    /// `generation_memory_damaged` for a file that is not one this type writes.
    func remembered(vaultID: [UInt8]) throws -> UInt64? {
        let path = path(vaultID: vaultID)
        let fd: Int32
        switch FileIO.open(path, O_RDONLY | O_NONBLOCK | O_NOFOLLOW) {
        case .success(let opened): fd = opened
        case .failure(let e) where e.code == ENOENT: return nil
        case .failure(let e): throw damaged(path, "it cannot be read: \(e.text)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else { throw damaged(path, "it is not a regular file") }
        let bytes: [UInt8]
        switch FileIO.readToEnd(fd, limit: Self.maxFileBytes) {
        case .success(let read): bytes = read
        case .failure(let e) where e.code == EFBIG: throw damaged(path, "it is over \(Self.maxFileBytes) bytes")
        case .failure(let e): throw damaged(path, "it cannot be read: \(e.text)")
        }
        let id = Sodium.hex(vaultID)
        let fields = String(decoding: bytes, as: UTF8.self).split(separator: " ", omittingEmptySubsequences: false)
        guard bytes.last == 0x0A, fields.count == 3, fields[0] == id,
              let generation = UInt64(fields[1]), String(generation) == fields[1],
              fields[2] == Self.check(id: id, generation: generation) + "\n"
        else { throw damaged(path, bytes.isEmpty ? "it is empty" : "its contents are not a generation this build wrote") }
        return generation
    }

    /// Raises the generation remembered for `vaultID` to `generation` (never lowers
    /// it). `checkpoint` hears `generation.temp-created` … `generation.folder-synced`.
    func remember(vaultID: [UInt8], generation: UInt64, checkpoint: @escaping @Sendable (String) -> Void) throws {
        try Vault.makeFolder(folder.path, what: "the folder of remembered vault generations")
        let lock = try FileLock.acquire(folder.appendingPathComponent(".lock").path, timeout: 10,
                                        busy: "the folder \(folder.path) is busy: another hubscript process holds its lock")
        defer { lock.release() }
        // What a writer killed before its rename left (every writer holds the lock).
        let leftover = "." + Sodium.hex(vaultID) + ".tmp-"
        for name in (try? FileManager.default.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix(leftover) {
            unlink(folder.appendingPathComponent(name).path)
        }
        if let known = try? remembered(vaultID: vaultID), known >= generation { return }
        let id = Sodium.hex(vaultID)
        let line = "\(id) \(generation) \(Self.check(id: id, generation: generation))\n"
        try AtomicFile.replace(path(vaultID: vaultID), with: Array(line.utf8), label: "generation", checkpoint: checkpoint)
    }

    /// Forgets what is remembered of `vaultID` (a damaged file included).
    func forget(vaultID: [UInt8]) throws {
        let path = path(vaultID: vaultID)
        guard unlink(path) == 0 || errno == ENOENT else {
            throw VaultError(.ioError, "cannot remove \(path): \(FileIO.reason(errno))")
        }
    }

    static func check(id: String, generation: UInt64) -> String {
        var hasher = SHA256()
        Array((checkDomain + "\(id) \(generation)").utf8).withUnsafeBytes { hasher.update($0) }
        return String(Sodium.hex(hasher.finish()).prefix(16))
    }

    private func damaged(_ path: String, _ what: String) -> VaultError {
        VaultError(.generationMemoryDamaged, "the record of this vault's generation, \(path), is damaged (\(what)), so hubscript cannot tell whether the vault was rolled back to an older copy. If the vault is the copy you expect, accept it with 'hubscript vault reseal' (or remove that file)")
    }
}
