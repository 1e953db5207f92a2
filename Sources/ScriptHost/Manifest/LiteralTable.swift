/// Reads a Lua table constructor made only of plain literals — what almost every recipe
/// manifest is — without starting a Lua state for it: the data-only state a manifest is
/// otherwise evaluated in (its set-up, its prelude, its teardown) was a sizeable part of
/// a short run's start (docs/performance.md, "Start-up").
///
/// It is a fast path, never a second judge: `parse` returns nil for anything outside
/// the small grammar below, and the caller then evaluates the text in the data-only
/// state as before, which gives the same value or the error Lua gives. Within the
/// grammar its value is the one Lua's would be (`LiteralTableTests` compares the two on
/// thousands of generated tables and on every bundled recipe):
///
///     table  = "{" [ field { ("," | ";") field } [ "," | ";" ] ] "}"
///     field  = key "=" value | value           (all keyed, or all positional)
///     key    = name | "[" string "]"
///     value  = string | number | "true" | "false" | table
///     string = '"' … '"' | "'" … "'"           (no backslash, no control character but tab)
///     number = [ "-" ] digits [ "." digits ]   (at most 18 digits before the point)
///
/// with spaces and `--` line comments between tokens (not `--[` comments; a comment ends
/// at `\n` or `\r`, as in Lua), names that are not Lua keywords, keys that are distinct
/// byte for byte when Swift calls them equal (or else nil), at most 16 levels of tables,
/// fewer registers than Lua's limit (`maxRegisters`), and at most 64 KiB of text (far
/// below what the data-only state's memory and instruction limits allow).
enum LiteralTable {
    static let maxBytes = 64 << 10
    static let maxDepth = 16
    /// Lua compiles a constructor into registers — one per open table, one per list
    /// item not yet flushed (up to 50 per table), one for a key it cannot address as a
    /// constant — and refuses a function that needs 255 ("function or expression needs
    /// too many registers"). The fast path counts them conservatively and leaves
    /// anything past this bound to Lua.
    static let maxRegisters = 200

    /// A whole chunk that only returns such a table — `return { … }`, with spaces and
    /// line comments around and an optional `;` — or nil (then Lua evaluates it).
    static func parseReturnedTable(_ source: String) -> ScriptValue? {
        guard source.utf8.count <= maxBytes + 64 << 10 else { return nil }
        var source = source
        return source.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            reader.skipSpace()
            guard !reader.failed, reader.matches("return") else { return nil }
            reader.pos += 6
            reader.skipSpace()
            let start = reader.pos
            guard !reader.failed, let value = reader.table(depth: 0, registers: 0), reader.pos - start <= maxBytes else {
                return nil
            }
            reader.skipSpace()
            if reader.peek() == UInt8(ascii: ";") {
                reader.pos += 1
                reader.skipSpace()
            }
            return reader.failed || reader.pos != bytes.count ? nil : value
        }
    }

    static func parse(_ text: String) -> ScriptValue? {
        guard text.utf8.count <= maxBytes else { return nil }
        var text = text
        return text.withUTF8 { bytes in
            var reader = Reader(bytes: bytes)
            guard let value = reader.table(depth: 0, registers: 0) else { return nil }
            reader.skipSpace()
            return reader.failed || reader.pos != bytes.count ? nil : value
        }
    }

    /// Lua's reserved words (a switch: a `Set` of them would be built and hashed at every
    /// start).
    static func isKeyword(_ name: String) -> Bool {
        switch name {
        case "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
             "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while": true
        default: false
        }
    }

    private struct Reader {
        let bytes: UnsafeBufferPointer<UInt8>
        var pos = 0
        /// Set when something outside the grammar was seen (a `--[` comment, say).
        var failed = false

        init(bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        func peek(_ offset: Int = 0) -> UInt8? { pos + offset < bytes.count ? bytes[pos + offset] : nil }

        mutating func skipSpace() {
            while let c = peek() {
                switch c {
                case _ where Self.isSpace(c): pos += 1
                case UInt8(ascii: "-") where peek(1) == UInt8(ascii: "-"):
                    if peek(2) == UInt8(ascii: "[") { failed = true; return }
                    // Lua ends a short comment at either newline byte, `\r` as well as `\n`.
                    while let c = peek(), c != 0x0A, c != 0x0D { pos += 1 }
                default: return
                }
            }
        }

        /// `registers`: those Lua holds when it reaches this table (see `maxRegisters`).
        mutating func table(depth: Int, registers: Int) -> ScriptValue? {
            guard depth < LiteralTable.maxDepth, registers + 1 <= LiteralTable.maxRegisters,
                  peek() == UInt8(ascii: "{") else { return nil }
            pos += 1
            var fields: [String: ScriptValue] = [:]
            var items: [ScriptValue] = []
            while true {
                skipSpace()
                if failed { return nil }
                if peek() == UInt8(ascii: "}") { break }
                let bracketed = bracketedKey()
                if failed { return nil }
                if let name = bracketed ?? name() {
                    skipSpace()
                    guard peek() == UInt8(ascii: "=") else { return nil }
                    pos += 1
                    skipSpace()
                    // The table, and the key when it is no constant Lua can address.
                    guard !failed, let value = value(depth: depth, registers: registers + 2) else { return nil }
                    // Swift's strings compare canonically ("é" precomposed equals "e" and
                    // a combining accent) where Lua's compare bytes: two such keys are two
                    // in Lua, and which one its reader keeps depends on its hash order.
                    if let existing = fields.index(forKey: name), !fields[existing].key.utf8.elementsEqual(name.utf8) {
                        return nil
                    }
                    fields[name] = value
                } else {
                    // The table, and the items not flushed yet (Lua flushes every 50).
                    guard let value = value(depth: depth, registers: registers + 1 + items.count % 50) else { return nil }
                    items.append(value)
                }
                skipSpace()
                if failed { return nil }
                if peek() == UInt8(ascii: ",") || peek() == UInt8(ascii: ";") { pos += 1; continue }
                if peek() == UInt8(ascii: "}") { break }
                return nil
            }
            pos += 1
            // Lua would give a table both kinds of key, which no value here can be: the
            // data-only state says so.
            if !fields.isEmpty && !items.isEmpty { return nil }
            return items.isEmpty ? .object(fields) : .array(items)
        }

        /// `["key"]` (a key that is a keyword, `["until"]`, or no name at all), or nil
        /// with nothing consumed unless it failed.
        mutating func bracketedKey() -> String? {
            guard peek() == UInt8(ascii: "["), peek(1) != UInt8(ascii: "["), peek(1) != UInt8(ascii: "=") else { return nil }
            pos += 1
            skipSpace()
            guard !failed, let quote = peek(), quote == UInt8(ascii: "\"") || quote == UInt8(ascii: "'"),
                  case .string(let key)? = string(quote: quote) else { failed = true; return nil }
            skipSpace()
            guard !failed, peek() == UInt8(ascii: "]") else { failed = true; return nil }
            pos += 1
            return key
        }

        /// A field name followed by `=` (not `==`), or nil with nothing consumed.
        mutating func name() -> String? {
            let start = pos
            guard let first = peek(), Self.isNameStart(first) else { return nil }
            var end = pos + 1
            while end < bytes.count, Self.isNameStart(bytes[end]) || Self.isDigit(bytes[end]) { end += 1 }
            var after = end
            while after < bytes.count, Self.isSpace(bytes[after]) { after += 1 }
            guard after < bytes.count, bytes[after] == UInt8(ascii: "="),
                  after + 1 >= bytes.count || bytes[after + 1] != UInt8(ascii: "=") else { return nil }
            let name = String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self)
            guard !LiteralTable.isKeyword(name) else { return nil }
            pos = end
            return name
        }

        mutating func value(depth: Int, registers: Int) -> ScriptValue? {
            guard let c = peek(), registers + 1 <= LiteralTable.maxRegisters else { return nil }
            switch c {
            case UInt8(ascii: "{"): return table(depth: depth + 1, registers: registers)
            case UInt8(ascii: "\""), UInt8(ascii: "'"): return string(quote: c)
            case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return number()
            default:
                for (word, value) in [("true", true), ("false", false)] where matches(word) {
                    pos += word.utf8.count
                    return .bool(value)
                }
                return nil
            }
        }

        /// `word` here, not followed by a name character.
        func matches(_ word: String) -> Bool {
            var offset = 0
            for byte in word.utf8 {
                guard peek(offset) == byte else { return false }
                offset += 1
            }
            guard let next = peek(offset) else { return true }
            return !Self.isNameStart(next) && !Self.isDigit(next)
        }

        mutating func string(quote: UInt8) -> ScriptValue? {
            let start = pos + 1
            var end = start
            while end < bytes.count, bytes[end] != quote {
                let c = bytes[end]
                if c == UInt8(ascii: "\\") || (c < 0x20 && c != 0x09) || c == 0x7F { return nil }
                end += 1
            }
            guard end < bytes.count else { return nil }
            pos = end + 1
            return .string(String(decoding: UnsafeBufferPointer(rebasing: bytes[start..<end]), as: UTF8.self))
        }

        mutating func number() -> ScriptValue? {
            var end = pos
            let negative = bytes[end] == UInt8(ascii: "-")
            if negative { end += 1 }
            let intStart = end
            while end < bytes.count, Self.isDigit(bytes[end]) { end += 1 }
            let intDigits = end - intStart
            guard intDigits > 0, intDigits <= 18 else { return nil }
            var isFloat = false
            if end < bytes.count, bytes[end] == UInt8(ascii: ".") {
                let fracStart = end + 1
                end = fracStart
                while end < bytes.count, Self.isDigit(bytes[end]) { end += 1 }
                guard end > fracStart, end - fracStart <= 20 else { return nil }
                isFloat = true
            }
            // Lua reads a numeral greedily (`1e5`, `0x1F`, `5a`): anything more is not ours.
            if end < bytes.count, Self.isNameStart(bytes[end]) || Self.isDigit(bytes[end]) || bytes[end] == UInt8(ascii: ".") {
                return nil
            }
            let digits = String(decoding: UnsafeBufferPointer(rebasing: bytes[intStart..<end]), as: UTF8.self)
            pos = end
            if isFloat {
                guard let magnitude = Double(digits) else { return nil }
                return .number(negative ? -magnitude : magnitude)
            }
            guard let magnitude = Int64(digits) else { return nil }
            return .integer(negative ? -magnitude : magnitude)
        }

        static func isNameStart(_ c: UInt8) -> Bool {
            (c >= UInt8(ascii: "a") && c <= UInt8(ascii: "z")) || (c >= UInt8(ascii: "A") && c <= UInt8(ascii: "Z")) || c == UInt8(ascii: "_")
        }

        /// Lua's spaces (C's `isspace` in the "C" locale).
        static func isSpace(_ c: UInt8) -> Bool { c == 0x20 || (c >= 0x09 && c <= 0x0D) }

        static func isDigit(_ c: UInt8) -> Bool { c >= UInt8(ascii: "0") && c <= UInt8(ascii: "9") }
    }
}
