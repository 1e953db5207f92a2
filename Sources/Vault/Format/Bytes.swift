/// Little-endian encoding for the vault's files (docs/vault-format.md).
struct ByteWriter {
    private(set) var bytes: [UInt8] = []

    init(capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func u8(_ v: UInt8) { bytes.append(v) }
    mutating func u16(_ v: UInt16) { integer(v) }
    mutating func u32(_ v: UInt32) { integer(v) }
    mutating func u64(_ v: UInt64) { integer(v) }
    mutating func i64(_ v: Int64) { integer(v) }
    mutating func raw(_ v: some Sequence<UInt8>) { bytes.append(contentsOf: v) }

    private mutating func integer<T: FixedWidthInteger>(_ v: T) {
        var le = v.littleEndian
        Swift.withUnsafeBytes(of: &le) { bytes.append(contentsOf: $0) }
    }
}

/// Reads a file's bytes front to back; every read says whether the bytes were there.
struct ByteReader {
    let bytes: [UInt8]
    private(set) var offset = 0

    init(_ bytes: [UInt8], offset: Int = 0) {
        self.bytes = bytes
        self.offset = offset
    }

    var remaining: Int { bytes.count - offset }

    /// The next `count` bytes, or nil (nothing consumed) if the file ends first.
    mutating func take(_ count: Int) -> ArraySlice<UInt8>? {
        guard count >= 0, remaining >= count else { return nil }
        defer { offset += count }
        return bytes[offset..<offset + count]
    }

    mutating func u8() -> UInt8? { take(1)?.first }
    mutating func u16() -> UInt16? { integer() }
    mutating func u32() -> UInt32? { integer() }
    mutating func u64() -> UInt64? { integer() }
    mutating func i64() -> Int64? { integer() }

    private mutating func integer<T: FixedWidthInteger>() -> T? {
        guard let slice = take(MemoryLayout<T>.size) else { return nil }
        var v: T = 0
        for (k, b) in slice.enumerated() { v |= T(truncatingIfNeeded: b) << (8 * k) }
        return v
    }
}
