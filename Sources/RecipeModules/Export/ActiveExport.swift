import Foundation
import ScriptHost
import SystemText

/// How an export writes its rows.
enum ExportFormat {
    case jsonl
    case csv(columns: [String]?, excelSafe: Bool)
}

/// One export in progress: its temporary file (or vault object), its format and its
/// row count.
///
/// Used only from the Lua thread (the session hands it out under its lock).
final class ActiveExport {
    /// The file name it becomes, e.g. `events.jsonl`, or `vault:audit/ada.jsonl`.
    let name: String
    /// The public function name for messages, `export.jsonl` or `export.csv`.
    let function: String
    private let destination: Destination
    private let writer: ExportFileWriter
    private var csv: CSVRowEncoder?
    private(set) var rows = 0

    private enum Destination {
        /// A file of the run's folder, written under `temporary` (see `ExportFolder.createTemporary`).
        case folder(ExportFolder, temporary: String)
        /// An object streamed into the vault.
        case vault(VaultObjectSink)
    }

    /// Creates the temporary file; refuses at once a final name that could not be
    /// replaced at the end (`ExportFolder.checkReplaceable`).
    convenience init(name: String, function: String, format: ExportFormat, folder: ExportFolder, masking: SecretRedactor) throws {
        try folder.checkReplaceable(name)
        let (fd, temporary) = try folder.createTemporary(for: name)
        try self.init(name: name, function: function, format: format, destination: .folder(folder, temporary: temporary),
                      writer: ExportFileWriter(fd: fd, path: folder.path(of: temporary), masking: masking))
    }

    /// Streams into the vault object `sink` writes (`name` is `vault:NAME`).
    convenience init(name: String, function: String, format: ExportFormat, vault sink: VaultObjectSink,
                     masking: SecretRedactor) throws {
        try self.init(name: name, function: function, format: format, destination: .vault(sink),
                      writer: ExportFileWriter(sink: sink, path: name, masking: masking))
    }

    private init(name: String, function: String, format: ExportFormat, destination: Destination, writer: ExportFileWriter) throws {
        self.name = name
        self.function = function
        self.destination = destination
        self.writer = writer
        if case .csv(let columns, let excelSafe) = format {
            let encoder = CSVRowEncoder(columns: columns, excelSafe: excelSafe)
            if let header = encoder.headerLine() { try writer.append(header) }
            csv = encoder
        }
    }

    /// Writes the next row. Errors read `export.csv: row 3: …`.
    /// What the row's encoding builds is charged to `budget` (the binding call's).
    func write(_ row: ScriptValue, budget: MemoryBudget? = nil) throws {
        let number = rows + 1
        do {
            if csv != nil {
                try writeCSV(row, number: number, budget: budget)
            } else {
                switch row {
                case .array, .object: break
                default: throw ScriptMessageError("\(function): row \(number) is \(SoftFailure.described(typeName: row.luaTypeName)), expected a table")
                }
                var line: [UInt8]
                do { line = try JSONCodec.encodeBytes(row, budget: budget) } catch let e as JSONCodec.Error {
                    throw ScriptMessageError("\(function): row \(number): \(e.message)")
                }
                line.append(0x0A)
                try writer.append(bytes: line)
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

    private func writeCSV(_ row: ScriptValue, number: Int, budget: MemoryBudget?) throws {
        guard case .object(let fields) = row else {
            if case .array = row {
                throw ScriptMessageError("\(function): row \(number) is a list; CSV rows are tables keyed by column name")
            }
            throw ScriptMessageError("\(function): row \(number) is \(SoftFailure.described(typeName: row.luaTypeName)), expected a table")
        }
        if let header = csv!.adoptColumns(from: fields) { try writer.append(header) }
        // Quoting can double a cell and the line is joined once more: charged up front.
        try budget?.charge(3 * fields.values.reduce(0) { $0 + Self.textBytes($1) })
        do { try writer.append(try csv!.encode(fields, row: number)) } catch let e as CSVCellError {
            throw ScriptMessageError("\(function): \(e.message)")
        }
    }

    /// Writes out, syncs and closes the temporary file and renames it to its final name
    /// (`ExportFolder.moveIntoPlace`). On error the temporary file stays: `abandon()` it.
    /// A vault export finishes its object instead (`VaultObjectSink.finish`).
    func complete() throws -> ExportedFile {
        try writer.sync()
        writer.close()
        switch destination {
        case .folder(let folder, let temporary):
            try folder.moveIntoPlace(temporary, as: name)
            return ExportedFile(name: name, rows: rows, bytes: writer.bytes, path: folder.path(of: name))
        case .vault(let sink):
            let id = try sink.finish()
            return ExportedFile(name: name, rows: rows, bytes: writer.bytes, path: name, objectID: id)
        }
    }

    /// For an export the run left unfinished: writes out what is buffered and renames the
    /// temporary file `NAME.incomplete` (replacing an earlier pass's); returns it. A vault
    /// export is dropped instead (its object is never half stored), and a file that
    /// cannot be kept is removed: both return nil.
    func keepIncomplete() -> ExportedFile? {
        guard case .folder(let folder, let temporary) = destination else {
            abandon()
            return nil
        }
        let kept = name + ExportedFile.incompleteSuffix
        do {
            try writer.sync()
            writer.close()
            try folder.moveIntoPlace(temporary, as: kept, removingIncomplete: false)
        } catch {
            abandon()
            return nil
        }
        var file = ExportedFile(name: kept, rows: rows, bytes: writer.bytes, path: folder.path(of: kept))
        file.incomplete = true
        return file
    }

    /// Closes and removes the temporary file (drops the vault object).
    func abandon() {
        writer.close()
        switch destination {
        case .folder(let folder, let temporary): folder.remove(temporary)
        case .vault(let sink): sink.abort()
        }
    }

    /// About how many bytes of text `value` becomes in a cell (its JSON for tables).
    static func textBytes(_ value: ScriptValue) -> Int {
        switch value {
        case .string(let s): return s.utf8.count
        case .array(let items): return items.reduce(2) { $0 + textBytes($1) + 1 }
        case .object(let fields): return fields.reduce(2) { $0 + $1.key.utf8.count + textBytes($1.value) + 4 }
        default: return 24
        }
    }
}
