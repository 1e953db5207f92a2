import ScriptHost

/// `csv.rows(path)`: iterate over the rows of a CSV file given as a `file` param.
///
/// `for row in csv.rows(params.users) do … end` yields one table per data row,
/// keyed by the header row, with string values; see `CSVFileReader` for the format
/// and `CSVSession` for which files may be opened and when they are closed. Rows are
/// read on demand, so memory stays constant however large the file. The iterator
/// lives in the Lua wrapper; Swift returns one row per call.
public enum CSVPlugin {
    /// A plugin with its own session over `allowedFiles` (absolute paths of the
    /// recipe's `file` params); open files close when the plugin is released.
    public static func make(allowedFiles: Set<String>) -> Plugin {
        make(session: CSVSession(allowedFiles: allowedFiles))
    }

    /// A plugin over `session`; call `session.closeAll()` when the run ends.
    public static func make(session: CSVSession) -> Plugin {
        Plugin(
            module: "csv",
            summary: "Read CSV files that the recipe declares as `file` params, row by row (constant memory). RFC 4180: quoted fields with commas, doubled quotes and line breaks; LF or CRLF line ends; a UTF-8 byte order mark is dropped; blank lines are skipped. The first row is the header.",
            functions: [
                ScriptFunction("rows", summary: "csv.rows(path) -> iterator: `for row in csv.rows(params.users) do … end`; each row is a table keyed by the header with string values (missing trailing fields are nil; a row with more fields than the header, or text that is not UTF-8, is an error naming the line). Only paths of `file` params can be opened; at most 32 at once; a file closes at its end or when the loop is left") { call in
                    try SoftFailure.wrap {
                        guard call.typeName(1) == "string" else {
                            throw ScriptMessageErrorFactory.argument(1, "csv.rows", "string expected, got \(call.typeName(1))")
                        }
                        return .value(.integer(Int64(try session.open(try call.string(1)))))
                    }
                },
            ],
            values: [
                "_next": .function(ScriptFunction("csv.next", summary: "internal: _next(handle) -> row | nil | nil, message") { call in
                    try SoftFailure.wrap {
                        guard let row = try session.next(Int(try call.integer(1))) else { return .value(.nilValue) }
                        return .value(.object(row))
                    }
                }),
                "_close": .function(ScriptFunction("csv.close", summary: "internal: _close(handle) closes the file") { call in
                    session.close(Int(try call.integer(1)))
                    return .none
                }),
            ],
            luaWrapper: #"""
            local raw = ...
            local setmetatable, error = setmetatable, error
            local open, next_row, close = raw.rows, raw._next, raw._close
            -- The fourth value of a generic for: closed when the loop ends, breaks or fails.
            local closer_mt = { __name = "csv.rows", __close = function(c) close(c[1]) end }
            return {
              rows = function(path)
                local id, err = open(path)
                if not id then error(err, 2) end
                local function iterate()
                  local row, e = next_row(id)
                  if e then error(e, 2) end
                  return row
                end
                return iterate, nil, nil, setmetatable({ id }, closer_mt)
              end,
            }
            """#)
    }
}
