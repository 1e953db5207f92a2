import SQLiteKit

extension SQLiteDatabase {
    /// The sandbox's store at `path` (`:memory:` for a private one): WAL for a file,
    /// foreign keys off (the handlers check references themselves), temp tables in memory.
    static func sandboxStore(path: String) throws -> SQLiteDatabase {
        let db = try SQLiteDatabase(path: path, busyTimeoutMs: 5_000)
        try db.enableWAL()
        try db.exec("PRAGMA foreign_keys=OFF; PRAGMA temp_store=MEMORY;")
        return db
    }
}

extension Statement {
    /// Writes column `i` as a JSON string, byte for byte what `JSON.string(text(i))`
    /// writes (`""` for NULL), without making a `String` for ASCII text.
    func writeText(_ i: Int32, into out: inout [UInt8]) {
        guard let p = textPointer(i) else { out.appendASCII("\"\""); return }
        JSON.writeString(cText: p, into: &out)
    }

    /// Writes column `i` as `JSON.str(textOrNil(i))` writes it: a string, or `null`.
    func writeTextOrNull(_ i: Int32, into out: inout [UInt8]) {
        guard let p = textPointer(i) else { out.appendASCII("null"); return }
        JSON.writeString(cText: p, into: &out)
    }
}
