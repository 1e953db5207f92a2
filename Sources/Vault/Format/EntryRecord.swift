/// One entry of a vault file, after the header (docs/vault-format.md):
///
///     1   kind: 1 secret, 2 object
///     1   reserved, 0
///     2   name length n (u16 LE, 1…255)
///     n   name (UTF-8)
///     8   created (i64 LE, Unix seconds)
///     8   updated (i64 LE, Unix seconds)
///     24  nonce
///     4   sealed length m (u32 LE)
///     m   XChaCha20-Poly1305 ciphertext + 16-byte tag
///
/// The associated data binds the sealed bytes to this vault, format, kind, name and
/// dates, so an entry cannot be renamed, moved to another name or vault, or have its
/// dates changed without failing authentication.
struct EntryRecord: Equatable {
    enum Kind: UInt8 {
        case secret = 1
        case object = 2
    }

    static let associatedDomain: [UInt8] = Array("hubscript-vault/entry".utf8) + [0]
    static let maxNameBytes = 255

    var kind: Kind
    var name: String
    var created: Int64
    var updated: Int64
    var nonce: [UInt8]
    var sealed: [UInt8]

    func associatedData(vaultID: [UInt8], version: UInt16) -> [UInt8] {
        var w = ByteWriter(capacity: 64 + name.utf8.count)
        w.raw(Self.associatedDomain)
        w.raw(vaultID)
        w.u16(version)
        w.u8(kind.rawValue)
        w.u16(UInt16(name.utf8.count))
        w.raw(name.utf8)
        w.i64(created)
        w.i64(updated)
        return w.bytes
    }

    func encode(into w: inout ByteWriter) {
        w.u8(kind.rawValue)
        w.u8(0)
        w.u16(UInt16(name.utf8.count))
        w.raw(name.utf8)
        w.i64(created)
        w.i64(updated)
        w.raw(nonce)
        w.u32(UInt32(sealed.count))
        w.raw(sealed)
    }

    /// Reads entry `number` (1-based) of `total`.
    static func parse(_ reader: inout ByteReader, number: Int, total: Int, file: String) throws -> EntryRecord {
        let truncated = VaultError(.truncated, "the vault \(file) is truncated (\(reader.bytes.count) bytes; it ends inside entry \(number) of \(total)): restore it from a backup")
        guard let kindByte = reader.u8(), let reserved = reader.u8(), let nameLength = reader.u16() else { throw truncated }
        guard let kind = Kind(rawValue: kindByte), reserved == 0 else {
            throw VaultError(.corrupt, "entry \(number) of \(total) in the vault \(file) has an unknown kind \(kindByte)")
        }
        guard nameLength >= 1, nameLength <= maxNameBytes else {
            throw VaultError(.corrupt, "entry \(number) of \(total) in the vault \(file) has a name of \(nameLength) bytes")
        }
        guard let nameBytes = reader.take(Int(nameLength)), let created = reader.i64(), let updated = reader.i64(),
              let nonce = reader.take(Sodium.nonceBytes), let sealedLength = reader.u32()
        else { throw truncated }
        guard let name = String(validating: nameBytes, as: UTF8.self) else {
            throw VaultError(.corrupt, "entry \(number) of \(total) in the vault \(file) has a name that is not UTF-8")
        }
        let limit = kind == .secret ? VaultLimits.maxSecretBytes : ObjectKeyRecord.size
        guard sealedLength >= Sodium.tagBytes, Int(sealedLength) <= limit + Sodium.tagBytes else {
            throw VaultError(.corrupt, "entry '\(name)' in the vault \(file) has a sealed length of \(sealedLength) bytes", entry: name)
        }
        guard let sealed = reader.take(Int(sealedLength)) else { throw truncated }
        return EntryRecord(kind: kind, name: name, created: created, updated: updated, nonce: Array(nonce), sealed: Array(sealed))
    }
}

/// What the vault will store.
public enum VaultLimits {
    /// The largest secret value (larger things are objects).
    public static let maxSecretBytes = 1 << 20
    /// The largest vault file read (the index: names, dates, sealed values).
    public static let maxIndexBytes = 64 << 20
}
