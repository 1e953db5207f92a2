/// The start of an object file (docs/vault-format.md):
///
///     0   8  magic "HUBVOBJ\0"
///     8   2  format version (u16 LE), 1
///     10  2  reserved, 0
///     12  4  plaintext bytes per chunk (u32 LE)
///     16 24  crypto_secretstream_xchacha20poly1305 header
///     40  …  chunks: each full chunk of plaintext sealed with tag MESSAGE (chunk + 17
///            bytes); the last, shorter one (possibly empty) with tag FINAL. Every
///            chunk's associated data is bytes 0..<16.
///
/// The object's id is `obj_` + the SHA-256 of the whole file, in hex.
struct ObjectFileHeader {
    static let magic: [UInt8] = Array("HUBVOBJ".utf8) + [0]
    static let currentVersion: UInt16 = 1
    static let fixedSize = 16
    static let size = fixedSize + Sodium.streamHeaderBytes
    static let chunkSizes = 1024...(16 << 20)

    var version: UInt16 = currentVersion
    var chunkSize: Int
    var streamHeader: [UInt8]

    /// Bytes 0..<16: every chunk's associated data.
    var fixedBytes: [UInt8] {
        var w = ByteWriter(capacity: Self.fixedSize)
        w.raw(Self.magic)
        w.u16(version)
        w.u16(0)
        w.u32(UInt32(chunkSize))
        return w.bytes
    }

    var encoded: [UInt8] { fixedBytes + streamHeader }

    /// The file's size for `plaintext` bytes.
    func fileSize(plaintext: UInt64) -> UInt64 {
        let chunk = UInt64(chunkSize)
        let overhead = UInt64(Sodium.streamOverhead)
        return UInt64(Self.size) + (plaintext / chunk) * (chunk + overhead) + plaintext % chunk + overhead
    }

    /// Reads the header of the object file `what` ("object 'x' (obj_…)").
    static func parse(_ bytes: [UInt8], what: String) throws -> ObjectFileHeader {
        var reader = ByteReader(bytes)
        let head = bytes.prefix(magic.count)
        guard head.elementsEqual(magic.prefix(head.count)) else {
            throw VaultError(.badMagic, "the file of \(what) is not a hubscript vault object (bad magic)")
        }
        guard reader.take(magic.count) != nil, let version = reader.u16() else {
            throw VaultError(.truncated, "the file of \(what) is truncated (\(bytes.count) bytes; it ends inside its header)")
        }
        guard version <= currentVersion else {
            throw VaultError(.newerFormat, "the file of \(what) was written by a newer hubscript: format \(version), this build reads up to \(currentVersion)")
        }
        guard let reserved = reader.u16(), let chunk = reader.u32(), let stream = reader.take(Sodium.streamHeaderBytes) else {
            throw VaultError(.truncated, "the file of \(what) is truncated (\(bytes.count) bytes; it ends inside its header)")
        }
        guard version >= 1, reserved == 0, chunkSizes.contains(Int(chunk)) else {
            throw VaultError(.corrupt, "the file of \(what) has a damaged header")
        }
        return ObjectFileHeader(version: version, chunkSize: Int(chunk), streamHeader: Array(stream))
    }
}

/// What an object's entry seals (72 bytes): the SHA-256 of its file (its id), its
/// file key, and its plaintext size (u64 LE). Rotating the vault key re-seals this,
/// never the file.
struct ObjectKeyRecord {
    static let size = 72
    let plain: SecretBytes

    init(_ plain: SecretBytes) {
        precondition(plain.count == Self.size)
        self.plain = plain
    }

    static func make(digest: [UInt8], fileKey: SecretBytes, size: UInt64) throws -> ObjectKeyRecord {
        let plain = try SecretBytes(count: Self.size)
        plain.withUnsafeMutableBytes { out in
            out.copyBytes(from: digest)
            fileKey.withUnsafeBytes { UnsafeMutableRawBufferPointer(rebasing: out[32..<64]).copyMemory(from: $0) }
            var le = size.littleEndian
            withUnsafeBytes(of: &le) { UnsafeMutableRawBufferPointer(rebasing: out[64..<72]).copyMemory(from: $0) }
        }
        return ObjectKeyRecord(plain)
    }

    var digest: [UInt8] { plain.withUnsafeBytes { Array($0[0..<32]) } }
    var id: String { VaultName.objectPrefix + Sodium.hex(digest) }
    var size: UInt64 { plain.withUnsafeBytes { $0.loadUnaligned(fromByteOffset: 64, as: UInt64.self).littleEndian } }

    func fileKey() throws -> SecretBytes {
        let key = try SecretBytes(count: Sodium.keyBytes)
        plain.withUnsafeBytes { p in key.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(rebasing: p[32..<64])) } }
        return key
    }

    func info(name: String) -> VaultObjectInfo {
        VaultObjectInfo(id: id, name: name == id ? nil : name, size: size)
    }
}
