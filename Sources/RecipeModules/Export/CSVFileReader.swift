import Foundation
import ScriptHost
import SystemText

/// Reads one CSV file row by row, as tables keyed by its header.
///
/// Streaming: the file is read in 64 KiB chunks and only the current record is kept.
/// A UTF-8 byte order mark at the start is dropped; blank lines are skipped; the
/// first non-blank record is the header (names must be distinct). A row with more
/// fields than the header is an error naming its line; a row with fewer leaves the
/// missing columns nil. All values are strings (use `tonumber`). Every field must be
/// valid UTF-8. Not thread-safe; `CSVSession` serialises use.
final class CSVFileReader {
    static let chunkSize = 64 << 10

    /// The path as the recipe gave it, for messages.
    let displayPath: String
    private var fd: Int32
    private var chunk: [UInt8]
    private var position = 0
    private var filled = 0
    private var atStart = true
    private var parser = CSVRecordParser()
    private var header: [String]?
    private var ended = false
    /// Bytes read when the file was opened (a pipe's first bytes), served first.
    private var pending: [UInt8] = []

    /// Opens `path`; the error names the path and the system's reason.
    init(path: String, displayPath: String) throws {
        self.displayPath = displayPath
        // Never waits: a FIFO nothing writes to is refused (`FileBytes.openForReading`).
        let opened: (fd: Int32, probed: [UInt8])
        do { opened = try FileBytes.openForReading(path) } catch {
            throw ScriptMessageError("csv.rows: cannot open \(SoftFailure.quoted(displayPath, limit: 4096)): \(FileErrorText.reason(error))")
        }
        fd = opened.fd
        chunk = [UInt8](repeating: 0, count: Self.chunkSize)
        pending = opened.probed
    }

    deinit { close() }

    var isOpen: Bool { fd >= 0 }

    /// Closes the file (idempotent).
    func close() {
        if fd >= 0 { _ = Glibc.close(fd) }
        fd = -1
        ended = true
    }

    /// The next row, or nil at the end of the file (the file is then closed).
    func next() throws -> [String: ScriptValue]? {
        while let record = try nextRecord() {
            if record.fields.isEmpty { continue }   // a blank line
            let values = try decode(record)
            guard let header else {
                try adoptHeader(values, line: record.line)
                continue
            }
            guard values.count <= header.count else {
                throw fail(record.line, "has \(values.count) fields, but the header has \(header.count)")
            }
            var row: [String: ScriptValue] = [:]
            row.reserveCapacity(values.count)
            for (column, value) in zip(header, values) { row[column] = .string(value) }
            return row
        }
        close()
        return nil
    }

    private func adoptHeader(_ names: [String], line: Int) throws {
        var seen = Set<String>()
        for name in names where !seen.insert(name).inserted {
            throw fail(line, "(the header) names the column \(SoftFailure.quoted(name)) twice")
        }
        header = names
    }

    private func decode(_ record: CSVRecordParser.Record) throws -> [String] {
        try record.fields.map { bytes in
            guard let text = String(validating: bytes, as: UTF8.self) else {
                throw fail(record.line, "is not valid UTF-8 (save the file as UTF-8)")
            }
            return text
        }
    }

    private func fail(_ line: Int, _ what: String) -> ScriptMessageError {
        ScriptMessageError("csv.rows: line \(line) of \(SoftFailure.quoted(displayPath, limit: 4096)) \(what)")
    }

    private func nextRecord() throws -> CSVRecordParser.Record? {
        guard !ended else { return nil }
        do {
            while true {
                if position == filled {
                    guard try fill() else {
                        ended = true
                        return try parser.finish()
                    }
                }
                while position < filled {
                    let byte = chunk[position]
                    position += 1
                    if let record = try parser.step(byte) { return record }
                }
            }
        } catch let failure as CSVRecordParser.Failure {
            throw ScriptMessageError("csv.rows: line \(failure.line) of \(SoftFailure.quoted(displayPath, limit: 4096)): \(failure.message)")
        }
    }

    /// Reads the next chunk; false at the end of the file.
    private func fill() throws -> Bool {
        guard fd >= 0 else { return false }
        var n: Int
        if !pending.isEmpty {
            n = pending.count
            chunk.replaceSubrange(0..<n, with: pending)
            pending = []
        } else {
            repeat {
                n = chunk.withUnsafeMutableBytes { read(fd, $0.baseAddress!, $0.count) }
            } while n < 0 && errno == EINTR
        }
        guard n >= 0 else {
            throw ScriptMessageError("csv.rows: cannot read \(SoftFailure.quoted(displayPath, limit: 4096)): \(String(cString: strerror(errno)))")
        }
        position = 0
        filled = n
        if atStart {
            atStart = false
            if n >= 3 && chunk[0] == 0xEF && chunk[1] == 0xBB && chunk[2] == 0xBF { position = 3 }
        }
        return n > 0
    }
}
