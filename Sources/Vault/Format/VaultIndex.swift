/// A whole vault file: the header, its entries in file order, and (format 2) the
/// index seal.
struct VaultIndex {
    var header: VaultHeader
    var records: [EntryRecord]
    /// Nil in format 1, and in a format-2 index not yet written.
    var seal: IndexSeal?

    var encoded: [UInt8] {
        var w = ByteWriter(capacity: header.size + records.reduce(0) { $0 + 72 + $1.name.utf8.count + $1.sealed.count }
                           + (seal.map { 28 + $0.sealed.count } ?? 0))
        w.raw(header.encoded)
        for r in records { r.encode(into: &w) }
        seal?.encode(into: &w)
        return w.bytes
    }

    /// Reads the `header.entryCount` entries after the header and, in format 2, the
    /// index seal; refuses a file that ends early, has bytes after its end, or holds
    /// a name twice.
    static func parseBody(_ reader: inout ByteReader, header: VaultHeader, file: String) throws -> (records: [EntryRecord], seal: IndexSeal?) {
        let total = Int(header.entryCount)
        var records: [EntryRecord] = []
        var names = Set<String>()
        for k in 0..<total {
            let record = try EntryRecord.parse(&reader, number: k + 1, total: total, file: file)
            guard names.insert(record.name).inserted else {
                throw VaultError(.corrupt, "the vault \(file) holds '\(record.name)' twice", entry: record.name)
            }
            records.append(record)
        }
        let seal = header.sealsIndex ? try IndexSeal.parse(&reader, file: file) : nil
        guard reader.remaining == 0 else {
            throw VaultError(.corrupt, "the vault \(file) has \(reader.remaining) unexpected bytes after its \(seal == nil ? "last entry" : "index seal")")
        }
        return (records, seal)
    }
}

/// The rule for entry names.
public enum VaultName {
    /// The prefix of object ids; names given by people cannot start with it.
    public static let objectPrefix = "obj_"

    /// Refuses a name that is not 1–255 letters, digits and `. _ - / @ : + =` starting
    /// with a letter or digit, or that starts with `obj_` (object ids' prefix).
    public static func validate(_ name: String) throws {
        let bytes = Array(name.utf8)
        let allowed = Set(".-_/@:+=".utf8)
        func alnum(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x39) || (b >= 0x41 && b <= 0x5A) || (b >= 0x61 && b <= 0x7A) }
        guard !bytes.isEmpty, bytes.count <= EntryRecord.maxNameBytes, alnum(bytes[0]),
              bytes.allSatisfy({ alnum($0) || allowed.contains($0) }) else {
            throw VaultError(.invalidName, "invalid name '\(name)': use 1–255 letters, digits and . _ - / @ : + = starting with a letter or digit", entry: name)
        }
        guard !name.hasPrefix(objectPrefix) else {
            throw VaultError(.invalidName, "invalid name '\(name)': names starting with \(objectPrefix) are object ids", entry: name)
        }
    }

    /// Whether `text` has the form of an object id (`obj_` and 64 lowercase hex digits).
    public static func isObjectID(_ text: String) -> Bool {
        let hex = text.utf8.dropFirst(objectPrefix.utf8.count)
        return text.hasPrefix(objectPrefix) && hex.count == 64
            && hex.allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) }
    }
}
