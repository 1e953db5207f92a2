import Foundation
import ScriptHost

/// How an export writes its rows.
enum ExportFormat {
    case jsonl
    case csv(columns: [String]?, excelSafe: Bool)
}

/// One export in progress: its partial file, its format and its row count.
///
/// Used only from the Lua thread (the session hands it out under its lock).
final class ActiveExport {
    let name: String
    /// The public function name for messages, `export.jsonl` or `export.csv`.
    let function: String
    let partialPath: String
    let finalPath: String
    private let writer: ExportFileWriter
    private var csv: CSVRowEncoder?
    private(set) var rows = 0

    init(name: String, function: String, format: ExportFormat, partialPath: String, finalPath: String) throws {
        self.name = name
        self.function = function
        self.partialPath = partialPath
        self.finalPath = finalPath
        writer = try ExportFileWriter(path: partialPath)
        if case .csv(let columns, let excelSafe) = format {
            let encoder = CSVRowEncoder(columns: columns, excelSafe: excelSafe)
            if let header = encoder.headerLine() { try writer.append(header) }
            csv = encoder
        }
    }

    /// Writes the next row. Errors read `export.csv: row 3: …`.
    func write(_ row: ScriptValue) throws {
        let number = rows + 1
        do {
            if csv != nil {
                try writeCSV(row, number: number)
            } else {
                switch row {
                case .array, .object: break
                default: throw ScriptMessageError("\(function): row \(number) is \(SoftFailure.described(typeName: row.luaTypeName)), expected a table")
                }
                let text: String
                do { text = try JSONCodec.encode(row) } catch let e as JSONCodec.Error {
                    throw ScriptMessageError("\(function): row \(number): \(e.message)")
                }
                try writer.append(text + "\n")
            }
        } catch let e as ExportIOError {
            throw ScriptMessageError("\(function): \(e.description)")
        }
        rows = number
    }

    /// JSONL only: writes a row that is already canonical JSON (a Hub list item).
    func writeEncoded(_ json: Data) throws {
        do {
            try writer.append(bytes: json)
            try writer.append("\n")
        } catch let e as ExportIOError {
            throw ScriptMessageError("\(function): \(e.description)")
        }
        rows += 1
    }

    private func writeCSV(_ row: ScriptValue, number: Int) throws {
        guard case .object(let fields) = row else {
            if case .array = row {
                throw ScriptMessageError("\(function): row \(number) is a list; CSV rows are tables keyed by column name")
            }
            throw ScriptMessageError("\(function): row \(number) is \(SoftFailure.described(typeName: row.luaTypeName)), expected a table")
        }
        if let header = csv!.adoptColumns(from: fields) { try writer.append(header) }
        do { try writer.append(try csv!.encode(fields, row: number)) } catch let e as CSVCellError {
            throw ScriptMessageError("\(function): \(e.message)")
        }
    }

    /// Flushes and closes the partial file and renames it to its final name.
    func complete() throws -> ExportedFile {
        try writer.flush()
        writer.close()
        guard rename(partialPath, finalPath) == 0 else {
            throw ExportIOError("cannot rename \(partialPath) to \(finalPath): \(String(cString: strerror(errno)))")
        }
        return ExportedFile(name: name, rows: rows, bytes: writer.bytes, path: finalPath)
    }

    /// Closes and removes the partial file.
    func abandon() {
        writer.close()
        unlink(partialPath)
    }
}
