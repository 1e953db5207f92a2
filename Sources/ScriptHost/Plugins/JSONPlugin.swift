/// `json.encode(value)`, `json.decode(text)`, `json.null`, `json.isnull(v)`, `json.array(t)`.
///
/// Bridging rules: see `ScriptValue` and `docs/bridging.md`.
public enum JSONPlugin {
    public static func make() -> Plugin {
        Plugin(
            module: "json", summary: "Encode and decode JSON (rules: docs/bridging.md). Also `json.null`, the JSON null value (a table, so it is truthy: test it with `json.isnull(v)`, never `if v then`), `json.isnull(v)`, true only for `json.null`, and `json.array(t)`, which marks `t` as an array so an empty one encodes as `[]`.",
            functions: [
                ScriptFunction("encode", summary: "json.encode(value) -> string: canonical JSON (sorted keys)") { call in
                    if call.isNil(1) && call.count < 1 { throw call.typeError(1, expected: "value") }
                    let value = try call.value(1)
                    do {
                        let bytes = try JSONCodec.encodeBytes(value, budget: call.budget)
                        return .value(.bytes(bytes))   // valid UTF-8; pushed without a String copy
                    } catch let e as JSONCodec.Error {
                        throw ScriptMessageError("json.encode: \(e.message)")
                    }
                },
                ScriptFunction("decode", summary: "json.decode(text) -> value; arrays keep their kind, null is json.null") { call in
                    do {
                        guard call.isString(1) else { return .value(try JSONCodec.decode(try call.string(1))) }
                        // Straight from the Lua string's bytes: no copy of the text.
                        return .value(try call.withRawBytes(1) { try JSONCodec.decode(bytes: $0, budget: call.budget) })
                    } catch let e as JSONCodec.Error {
                        throw ScriptMessageError("json.decode: \(e.message)")
                    }
                },
            ],
            luaWrapper: """
            local raw, support = ...
            local setmetatable, type, error, rawequal = setmetatable, type, error, rawequal
            return {
              encode = raw.encode,
              decode = raw.decode,
              null = support.null,
              isnull = function(v) return rawequal(v, support.null) end,
              array = function(t)
                if t == nil then t = {} end
                if type(t) ~= "table" then
                  error("bad argument #1 to 'json.array' (table expected, got " .. type(t) .. ")", 2)
                end
                return setmetatable(t, support.array_mt)
              end,
            }
            """)
    }
}

/// `log.debug/info/warn/error(message [, fields])`: to stderr, or NDJSON with `--json`.
public enum LogPlugin {
    public static func make(output: any ScriptOutput) -> Plugin {
        let functions = LogLevel.allCases.map { level in
            ScriptFunction(level.rawValue, summary: "log.\(level.rawValue)(message [, fields])") { call in
                let message = ShownText.cut(try call.string(1))
                var fields: [String: ScriptValue] = [:]
                if !call.isNil(2) {
                    guard case .object(let f) = try call.table(2) else {
                        throw call.argumentError(2, "table of named fields expected")
                    }
                    fields = f
                    // Shown as JSON or k=v and escaped for a terminal, which can grow them
                    // sixfold: fields larger than the cap are replaced by a note.
                    let size = JSONCodec.estimatedSize(.object(fields))
                    if size > ShownText.maxBytes {
                        fields = ["fields_omitted": .string("about \(size) bytes of fields as JSON; a log line keeps at most \(ShownText.maxBytes)")]
                    }
                }
                output.log(level, message, fields: fields)
                return .none
            }
        }
        return Plugin(module: "log", summary: "Log lines to stderr (NDJSON on stdout with --json).", functions: functions)
    }
}

/// `params`: the recipe's validated, typed parameters as a plain table.
public enum ParamsPlugin {
    public static func make(_ values: [String: ScriptValue]) -> Plugin {
        Plugin(module: "params", summary: "The recipe's validated parameters.", values: values)
    }
}
