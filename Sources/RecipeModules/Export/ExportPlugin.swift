import ScriptHost

/// `export.jsonl(name, rows)` and `export.csv(name, rows [, options])`: stream rows
/// into files of the run's output folder (see `ExportSession`).
///
/// `rows` is what a generic `for` takes: an iterator function (`for row in f`), the
/// three values `f, s, ctl` (`ipairs(t)`, `pairs(t)`: the row is the *second* value,
/// as in `for _, row in ipairs(t)`), or, for convenience, a list of rows (`t[1]..t[#t]`).
/// The options of `export.csv` follow the iterator function or list
/// (`export.csv(name, f, {columns = …})`) or the three values (`…, f, s, ctl, options)`).
///
/// The iteration runs in the Lua wrapper; Swift receives one row per call, encodes it
/// and appends it to a buffered file, so memory stays constant however many rows.
public enum ExportPlugin {
    public static func make(session: ExportSession) -> Plugin {
        Plugin(
            module: "export",
            summary: "Stream rows into files of the run's output folder (created on first use, mode 0700; files 0600). Names are plain file names (no `/`, `\\`, leading `.`; at most 200 bytes) ending in `.jsonl` or `.ndjson` (`export.jsonl`) or `.csv` (`export.csv`); a name without an extension gets `.jsonl` or `.csv`, and each may be used once per run. A file is written under a temporary name and renamed into place; an existing link, folder or hard-linked file of that name is refused and left untouched. An export the run leaves unfinished (it stopped: a limit, an error, a refused write) keeps the rows written so far as `NAME.incomplete`; a resume that completes the export writes `NAME` whole and removes it. `rows` is an iterator function, the three values of `ipairs(t)`/`pairs(t)` (the row is the second value) or a list of rows; rows must be tables. A name `vault:NAME` (e.g. `vault:audit/ada.jsonl`) streams the export encrypted into the vault as the object NAME instead (stored only if the export completes; a plan stores nothing). Both return `{name=, rows=, bytes=, path=}` (and `object_id=` for the vault).",
            functions: [
                ScriptFunction("jsonl", summary: "export.jsonl(name, rows) -> summary: one canonical JSON document (sorted keys) per line") { call in
                    try SoftFailure.wrap { try begin(call, session: session, function: "export.jsonl", example: "events.jsonl") { call in
                        guard call.isNil(2) else { throw ScriptMessageErrorFactory.argument(3, "export.jsonl", "export.jsonl takes no options") }
                        return .jsonl
                    } }
                },
                ScriptFunction("csv", summary: "export.csv(name, rows [, {columns = {…}, excel_safe = false}]) -> summary: RFC 4180 CSV with CRLF line ends and a header row from `columns`, or else the sorted keys of the first row (then a later row with another key is an error); extra fields are ignored when `columns` is given. Cells: strings, integers, floats (`1.0`), `true`/`false`, nil and json.null empty, tables as JSON; `excel_safe = true` prefixes `'` to string cells starting with `=`, `+`, `-`, `@`, tab or CR") { call in
                    try SoftFailure.wrap { try begin(call, session: session, function: "export.csv", example: "users.csv", format: csvFormat) }
                },
            ],
            values: [
                "_write": .function(ScriptFunction("export.write", summary: "internal: _write(handle, row) -> nothing | nil, message") { call in
                    try SoftFailure.wrap { try write(call, session: session) }
                }),
                "_write_hub_list": .function(ScriptFunction("export.write_hub_list", summary: "internal: _write_hub_list(handle, list handle) -> true | false (no page source) | nil, message") { call in
                    try SoftFailure.wrap {
                        guard let pages = session.hubPages else { return .value(.bool(false)) }
                        let export = try session.export(Int(try call.integer(1)))
                        let list = Int(try call.integer(2))
                        while let page = try pages(list) {
                            for item in page { try export.writeEncoded(item) }
                        }
                        return .value(.bool(true))
                    }
                }),
                "_finish": .function(ScriptFunction("export.finish", summary: "internal: _finish(handle) -> summary | nil, message") { call in
                    try SoftFailure.wrap {
                        let file = try session.complete(Int(try call.integer(1)))
                        var summary: [String: ScriptValue] = ["name": .string(file.name), "rows": .integer(Int64(file.rows)),
                                                              "bytes": .integer(Int64(file.bytes)), "path": .string(file.path)]
                        if let id = file.objectID { summary["object_id"] = .string(id) }
                        return .value(.object(summary))
                    }
                }),
            ],
            luaWrapper: ExportWrapper.source)
    }

    /// Raw `jsonl`/`csv`: `(name, options)` -> handle. The wrapper has already split
    /// the iterator from the options, so `options` is public argument #3.
    private static func begin(_ call: BindingCall, session: ExportSession, function: String, example: String,
                              format: (BindingCall) throws -> ExportFormat) throws -> ScriptResult {
        guard call.typeName(1) == "string" else {
            throw ScriptMessageErrorFactory.argument(1, function, "string expected, got \(call.typeName(1))")
        }
        let name: String
        do { name = try call.string(1) } catch { throw ScriptMessageErrorFactory.argument(1, function, "export names are plain file names like '\(example)', got a string that is not valid UTF-8") }
        try ExportName.validate(name, function: function, example: example)
        let chosen = try format(call)
        return .value(.integer(Int64(try session.begin(name: name, format: chosen, function: function))))
    }

    /// The `export.csv` options at raw argument 2 (public #3).
    private static func csvFormat(_ call: BindingCall) throws -> ExportFormat {
        func bad(_ detail: String) -> ScriptMessageError { ScriptMessageErrorFactory.argument(3, "export.csv", detail) }
        if call.isNil(2) { return .csv(columns: nil, excelSafe: false) }
        guard call.typeName(2) == "table" else { throw bad("options table expected, got \(call.typeName(2))") }
        let options: ScriptValue
        do { options = try call.value(2) } catch let e as ScriptMessageError { throw bad(SoftFailure.detail(of: e)) }
        guard case .object(let fields) = options else { throw bad("options must be a table with named fields (columns, excel_safe)") }
        if let unknown = fields.keys.sorted().first(where: { $0 != "columns" && $0 != "excel_safe" }) {
            throw bad("unknown option \(SoftFailure.quoted(unknown)); the options are columns and excel_safe")
        }
        var excelSafe = false
        switch fields["excel_safe"] ?? .nilValue {
        case .nilValue: break
        case .bool(let b): excelSafe = b
        case let other: throw bad("excel_safe must be a boolean, got \(other.luaTypeName)")
        }
        var columns: [String]?
        switch fields["columns"] ?? .nilValue {
        case .nilValue: break
        case .array(let items) where !items.isEmpty:
            var names: [String] = []
            for item in items {
                guard case .string(let s) = item else { throw bad("columns must be a list of strings, got a \(item.luaTypeName) in it") }
                guard !names.contains(s) else { throw bad("columns lists \(SoftFailure.quoted(s)) twice") }
                names.append(s)
            }
            columns = names
        default: throw bad("columns must be a non-empty list of strings")
        }
        return .csv(columns: columns, excelSafe: excelSafe)
    }

    /// Raw `_write(handle, row)`: nothing on success.
    private static func write(_ call: BindingCall, session: ExportSession) throws -> ScriptResult {
        let export = try session.export(Int(try call.integer(1)))
        let type = call.typeName(2)
        guard type == "table" else {
            throw ScriptMessageError("\(export.function): row \(export.rows + 1) is \(SoftFailure.described(typeName: type)), expected a table")
        }
        let row: ScriptValue
        do { row = try call.value(2) } catch let e as ScriptMessageError {
            throw ScriptMessageError("\(export.function): row \(export.rows + 1): \(SoftFailure.detail(of: e))")
        }
        try export.write(row, budget: call.budget)
        return .none
    }
}
