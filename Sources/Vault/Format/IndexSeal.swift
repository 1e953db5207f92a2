import SHA256Kit

/// The index seal that ends a format-2 vault file (docs/vault-format.md):
///
///     24  nonce (random for every write)
///     4   sealed length m (u32 LE)
///     m   XChaCha20-Poly1305 of the entry list, associated data
///         "hubscript-vault/index\0" + the header's authenticated bytes (0..<72)
///
/// The entry list names, in file order, each entry and the SHA-256 of its record's
/// bytes: `2 name length, name, 32 digest` per entry. Together with the header's
/// generation and entry count it authenticates the index as a whole, so an entry
/// replaced by an older sealed copy of itself, an entry put back after its removal
/// and an entry taken out are all told apart from the vault the key last wrote.
struct IndexSeal: Equatable {
    static let associatedDomain: [UInt8] = Array("hubscript-vault/index".utf8) + [0]

    var nonce: [UInt8]
    var sealed: [UInt8]

    func encode(into w: inout ByteWriter) {
        w.raw(nonce)
        w.u32(UInt32(sealed.count))
        w.raw(sealed)
    }

    static func associatedData(header: VaultHeader) -> [UInt8] { associatedDomain + header.authenticatedBytes }

    /// Reads the seal after the last entry; it must end the file.
    static func parse(_ reader: inout ByteReader, file: String) throws -> IndexSeal {
        guard let nonce = reader.take(Sodium.nonceBytes), let length = reader.u32(), let sealed = reader.take(Int(length)) else {
            throw VaultError(.truncated, "the vault \(file) is truncated (\(reader.bytes.count) bytes; it ends inside its index seal): restore it from a backup")
        }
        guard length >= Sodium.tagBytes else {
            throw VaultError(.corrupt, "the vault \(file) has an index seal of \(length) bytes (a damaged file): restore it from a backup")
        }
        return IndexSeal(nonce: Array(nonce), sealed: Array(sealed))
    }

    /// One line of the sealed list: an entry's name and the SHA-256 of its record.
    struct Line: Equatable {
        let name: String
        let digest: [UInt8]
    }

    /// The list's plaintext for `records`.
    static func list(_ records: [EntryRecord]) -> [UInt8] {
        var w = ByteWriter()
        for r in records {
            w.u16(UInt16(r.name.utf8.count))
            w.raw(r.name.utf8)
            w.raw(r.digest)
        }
        return w.bytes
    }

    /// Reads a list made by `list`; nil if it is not one (which, once the seal has
    /// authenticated, only a build with another layout could have made).
    static func lines(_ plain: UnsafeRawBufferPointer) -> [Line]? {
        var reader = ByteReader(Array(plain))
        var lines: [Line] = []
        while reader.remaining > 0 {
            guard let length = reader.u16(), let name = reader.take(Int(length)), let digest = reader.take(Sodium.sha256Bytes),
                  let text = String(validating: name, as: UTF8.self) else { return nil }
            lines.append(Line(name: text, digest: Array(digest)))
        }
        return lines
    }
}

extension EntryRecord {
    /// The SHA-256 of the record's bytes as the file holds them.
    var digest: [UInt8] {
        var w = ByteWriter(capacity: 64 + name.utf8.count + sealed.count)
        encode(into: &w)
        var hasher = SHA256()
        w.bytes.withUnsafeBytes { hasher.update($0) }
        return hasher.finish()
    }
}
