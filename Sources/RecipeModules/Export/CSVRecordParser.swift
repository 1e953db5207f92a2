/// An incremental RFC 4180 record parser over bytes.
///
/// Feed it one byte at a time (`step`); a byte that completes a record returns it,
/// so a reader can stop after each record and keep only one in memory. Records end at LF, CRLF or a lone CR outside quotes; quoted fields
/// may hold commas, doubled quotes (`""` is `"`) and line breaks. A quote inside an
/// unquoted field is kept as a character (lenient); after a closing quote only a
/// comma or a line end may follow. A completely empty line is reported as a record
/// with no fields (callers skip it). Line numbers count line ends outside and
/// inside quotes, so they match what an editor shows.
struct CSVRecordParser {
    /// A parsed record: its raw fields and the line it started on (1-based).
    struct Record {
        var fields: [[UInt8]]
        var line: Int
    }

    struct Failure: Error {
        let line: Int
        let message: String
    }

    private enum State { case fieldStart, unquoted, quoted, quoteInQuoted, afterCR }

    /// Longest record accepted, in bytes; guards memory against a file that is not CSV.
    let maxRecordBytes: Int
    private var state = State.fieldStart
    private var field: [UInt8] = []
    private var fields: [[UInt8]] = []
    private var recordBytes = 0
    private var recordQuoted = false
    private var line = 1
    private var recordLine = 1

    init(maxRecordBytes: Int = 1 << 20) {
        self.maxRecordBytes = maxRecordBytes
    }

    /// Ends the input; returns the last record if the file did not end with a line end.
    mutating func finish() throws -> Record? {
        switch state {
        case .quoted:
            throw Failure(line: recordLine, message: "a quoted field is not closed before the end of the file")
        case .fieldStart where fields.isEmpty && field.isEmpty && !recordQuoted:
            return nil
        default:
            return endRecord()
        }
    }

    /// Consumes one byte; returns the record it completes, if any (at most one).
    mutating func step(_ b: UInt8) throws -> Record? {
        recordBytes += 1
        if recordBytes > maxRecordBytes {
            throw Failure(line: recordLine, message: "a row is longer than \(maxRecordBytes) bytes (is this a CSV file?)")
        }
        switch state {
        case .fieldStart:
            switch b {
            case 0x22: state = .quoted; recordQuoted = true
            case 0x2C: endField()
            case 0x0A: line += 1; return endRecord()
            case 0x0D: state = .afterCR
            default: field.append(b); state = .unquoted
            }
        case .unquoted:
            switch b {
            case 0x2C: endField()
            case 0x0A: line += 1; return endRecord()
            case 0x0D: state = .afterCR
            default: field.append(b)
            }
        case .quoted:
            if b == 0x22 { state = .quoteInQuoted; return nil }
            if b == 0x0A { line += 1 }
            field.append(b)
        case .quoteInQuoted:
            switch b {
            case 0x22: field.append(0x22); state = .quoted
            case 0x2C: endField()
            case 0x0A: line += 1; return endRecord()
            case 0x0D: state = .afterCR
            default:
                throw Failure(line: line, message: "a quoted field must be followed by a comma or the end of the line (write a quote inside a quoted field as \"\")")
            }
        case .afterCR:
            line += 1
            let record = endRecord()
            if b != 0x0A { _ = try step(b) }   // a lone CR: b starts the next record (cannot end it)
            return record
        }
        return nil
    }

    private mutating func endField() {
        fields.append(field)
        field.removeAll(keepingCapacity: true)
        state = .fieldStart
    }

    private mutating func endRecord() -> Record {
        let blank = fields.isEmpty && field.isEmpty && !recordQuoted
        var record = Record(fields: [], line: recordLine)
        if !blank {
            endField()
            record.fields = fields
        }
        fields.removeAll(keepingCapacity: true)
        field.removeAll(keepingCapacity: true)
        state = .fieldStart
        recordQuoted = false
        recordBytes = 0
        recordLine = line
        return record
    }
}
