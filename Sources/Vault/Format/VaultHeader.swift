/// The header of a vault file (docs/vault-format.md): 112 bytes in format 2, 104 in
/// format 1 (which has no generation; this build reads it and writes format 2):
///
///     0   8  magic "HUBVAULT"
///     8   2  format version (u16 LE), 2
///     10  1  key kind: 1 raw 32-byte key, 2 passphrase (Argon2id13)
///     11  1  reserved, 0
///     12 16  vault id (random at init, kept by rotate-key)
///     28  8  Argon2id opslimit (u64 LE; 0 for a raw key)
///     36  8  Argon2id memlimit in bytes (u64 LE; 0 for a raw key)
///     44 16  Argon2id salt (zeros for a raw key)
///     60  4  entry count (u32 LE)
///     64  8  generation (u64 LE): 1 at init, one more at every write (format 2 only)
///     72 24  key-check nonce
///     96 16  key-check tag: XChaCha20-Poly1305 of no bytes, associated data
///            "hubscript-vault/key-check\0" + bytes 0..<72
struct VaultHeader: Equatable {
    static let magic: [UInt8] = Array("HUBVAULT".utf8)
    /// The newest format this build reads and the one it writes.
    static let currentVersion: UInt16 = 2
    /// The format without a generation or an index seal (read, and migrated on write).
    static let legacyVersion: UInt16 = 1
    static let vaultIDBytes = 16
    static let keyCheckDomain: [UInt8] = Array("hubscript-vault/key-check".utf8) + [0]

    enum KeyKind: UInt8 {
        case raw = 1
        case passphrase = 2
    }

    var version: UInt16 = currentVersion
    var keyKind: KeyKind
    var vaultID: [UInt8]
    /// Argon2id costs; nil for a raw key.
    var kdf: VaultKDF?
    var salt: [UInt8]
    var entryCount: UInt32
    /// How many times the vault was written (0 in format 1, which does not count).
    var generation: UInt64 = 0
    var checkNonce: [UInt8]
    var checkTag: [UInt8]

    /// Whether this format seals its index as a whole (a generation and an index seal).
    var sealsIndex: Bool { version >= 2 }

    /// The bytes the key check authenticates: 0..<72 (0..<64 in format 1).
    var authenticatedSize: Int { sealsIndex ? 72 : 64 }
    /// The header's size in the file.
    var size: Int { authenticatedSize + Sodium.nonceBytes + Sodium.tagBytes }

    /// The bytes before the key check, which it authenticates.
    var authenticatedBytes: [UInt8] {
        var w = ByteWriter(capacity: authenticatedSize)
        w.raw(Self.magic)
        w.u16(version)
        w.u8(keyKind.rawValue)
        w.u8(0)
        w.raw(vaultID)
        w.u64(kdf?.opsLimit ?? 0)
        w.u64(kdf?.memLimit ?? 0)
        w.raw(salt)
        w.u32(entryCount)
        if sealsIndex { w.u64(generation) }
        return w.bytes
    }

    var keyCheckAssociatedData: [UInt8] { Self.keyCheckDomain + authenticatedBytes }

    var encoded: [UInt8] { authenticatedBytes + checkNonce + checkTag }

    /// Reads the header at the start of `bytes`. Checks, in order: the magic (a file
    /// that is a prefix of it is truncated, anything else is not a vault), the version
    /// (a newer one is named), then the fields.
    static func parse(_ reader: inout ByteReader, file: String) throws -> VaultHeader {
        let size = reader.bytes.count
        let truncated = VaultError(.truncated, "the vault \(file) is truncated (\(size) bytes; it ends inside its header): restore it from a backup")
        let head = reader.bytes.prefix(magic.count)
        guard head.elementsEqual(magic.prefix(head.count)) else {
            throw VaultError(.badMagic, "\(file) is not a hubscript vault (bad magic)")
        }
        guard reader.take(magic.count) != nil, let version = reader.u16() else { throw truncated }
        guard version <= currentVersion else {
            throw VaultError(.newerFormat, "the vault \(file) was written by a newer hubscript: format \(version), this build reads up to \(currentVersion)")
        }
        guard version >= 1 else { throw VaultError(.corrupt, "the vault \(file) has an unknown format version 0") }
        guard let kind = reader.u8(), let reserved = reader.u8(), let id = reader.take(vaultIDBytes),
              let ops = reader.u64(), let mem = reader.u64(), let salt = reader.take(Sodium.saltBytes),
              let count = reader.u32()
        else { throw truncated }
        var generation: UInt64 = 0
        if version >= 2 {
            guard let counted = reader.u64() else { throw truncated }
            generation = counted
        }
        guard let nonce = reader.take(Sodium.nonceBytes), let tag = reader.take(Sodium.tagBytes) else { throw truncated }
        guard let keyKind = KeyKind(rawValue: kind), reserved == 0 else {
            throw VaultError(.corrupt, "the vault \(file) has an unknown key kind \(kind) (or a damaged header)")
        }
        var kdf: VaultKDF?
        switch keyKind {
        case .raw:
            guard ops == 0, mem == 0, salt.allSatisfy({ $0 == 0 }) else {
                throw VaultError(.corrupt, "the vault \(file) has Argon2id settings for a raw key (a damaged header)")
            }
        case .passphrase:
            let params = VaultKDF(opsLimit: ops, memLimit: mem)
            guard params.isAccepted else {
                throw VaultError(.corrupt, "the vault \(file) asks for Argon2id costs this build refuses (\(ops) passes, \(mem) bytes): is its header damaged?")
            }
            kdf = params
        }
        return VaultHeader(version: version, keyKind: keyKind, vaultID: Array(id), kdf: kdf, salt: Array(salt),
                           entryCount: count, generation: generation, checkNonce: Array(nonce), checkTag: Array(tag))
    }
}
