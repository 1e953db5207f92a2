import Foundation
import ScriptHost

/// Turns export rows into RFC 4180 CSV lines (CRLF line ends).
///
/// Columns: the `columns` option when given (then fields outside it are ignored — a
/// projection); otherwise the sorted keys of the first row, and a later row with a key
/// outside them is an error rather than silently losing data.
///
/// Cells: strings as they are; integers in decimal; floats as in JSON, keeping
/// `1.0`; booleans `true`/`false`; nil and `json.null` empty; tables as canonical
/// JSON text. A cell containing `,`, `"`, CR or LF is quoted, with `"` doubled.
///
/// Formula injection: off by default, because it alters data. With `excel_safe`,
/// a *string* cell (header included) that starts with `=`, `+`, `-`, `@`, tab or CR
/// gets a leading `'` so spreadsheets show it as text; numbers are never changed.
struct CSVRowEncoder {
    private(set) var columns: [String]?
    private var columnSet: Set<String> = []
    let explicitColumns: Bool
    let excelSafe: Bool

    init(columns: [String]?, excelSafe: Bool) {
        self.columns = columns
        self.explicitColumns = columns != nil
        self.excelSafe = excelSafe
        if let columns { columnSet = Set(columns) }
    }

    /// The header line, if the columns are known yet.
    func headerLine() -> String? {
        columns.map { line($0.map { quote(safe($0)) }) }
    }

    /// Fixes the columns from the first row when none were given; returns the header line then.
    mutating func adoptColumns(from fields: [String: ScriptValue]) -> String? {
        guard columns == nil else { return nil }
        columns = fields.keys.sorted()
        columnSet = Set(columns!)
        return headerLine()
    }

    /// The CSV line for one row (a table keyed by column name). `row` is 1-based, for messages.
    func encode(_ fields: [String: ScriptValue], row: Int) throws -> String {
        let columns = columns ?? []
        if !explicitColumns, fields.count > columns.count || fields.keys.contains(where: { !columnSet.contains($0) }) {
            let extra = fields.keys.sorted().first { !columnSet.contains($0) } ?? "?"
            throw CSVCellError(
                "row \(row) has a field \(SoftFailure.quoted(extra)) that is not a column (the columns come from the first row's keys: \(columns.joined(separator: ", "))); pass {columns = {…}} to choose them")
        }
        var cells: [String] = []
        cells.reserveCapacity(columns.count)
        for column in columns {
            do { cells.append(try cell(fields[column] ?? .nilValue)) } catch let e as CSVCellError {
                throw CSVCellError("row \(row), column \(SoftFailure.quoted(column)): \(e.message)")
            }
        }
        return line(cells)
    }

    private func line(_ cells: [String]) -> String { cells.joined(separator: ",") + "\r\n" }

    /// One cell's text, quoted as needed.
    func cell(_ value: ScriptValue) throws -> String {
        switch value {
        case .nilValue, .null: return ""
        case .bool(let b): return b ? "true" : "false"
        case .integer(let i): return String(i)
        case .number, .array, .object:
            do { return quote(try JSONCodec.encode(value)) } catch let e as JSONCodec.Error {
                throw CSVCellError(e.message)
            }
        case .string(let s): return quote(safe(s))
        case .bytes: throw CSVCellError("cannot write a string that is not valid UTF-8")
        case .function: throw CSVCellError("cannot write a function")
        case .handle(let h): throw CSVCellError("cannot write \(h): an opaque handle has no value")
        }
    }

    private func safe(_ s: String) -> String {
        guard excelSafe, let first = s.unicodeScalars.first, "=+-@\t\r".unicodeScalars.contains(first) else { return s }
        return "'" + s
    }

    private func quote(_ s: String) -> String {
        guard s.utf8.contains(where: { $0 == 0x2C || $0 == 0x22 || $0 == 0x0D || $0 == 0x0A }) else { return s }
        return "\"" + s.replacingOccurrences(of: "\"", with: "\"\"") + "\""
    }
}

struct CSVCellError: Error {
    let message: String
    init(_ message: String) { self.message = message }
}
