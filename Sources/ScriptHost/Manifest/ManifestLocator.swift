/// Finds the manifest table constructor at the top of a recipe without running it.
///
/// A recipe must start (after blank lines, comments and an optional `#!` line) with
/// `recipe { … }` or `recipe({ … })`. The locator is a small Lua lexer: it skips
/// comments and strings (short and long brackets) while matching braces, so the
/// manifest can be evaluated alone as data — `check` and `describe` never execute
/// the body.
struct ManifestLocator {
    struct Located {
        /// The `{ … }` text.
        let table: String
        /// 1-based line where `{` stands.
        let line: Int
    }

    struct Failure: Error {
        let line: Int
        let message: String
    }

    private let bytes: [UInt8]
    private var pos = 0
    private var line = 1

    init(source: String) { bytes = Array(source.utf8) }

    static func locate(in source: String) throws -> Located {
        var locator = ManifestLocator(source: source)
        return try locator.run()
    }

    private mutating func run() throws -> Located {
        if bytes.starts(with: Array("#".utf8)) { skipLine() }
        try skipSpaceAndComments()
        let startLine = line
        guard readIdentifier() == "recipe" else {
            throw Failure(line: startLine, message: "a recipe must start with its manifest: recipe { name = …, … }")
        }
        try skipSpaceAndComments()
        if peek() == UInt8(ascii: "(") { pos += 1; try skipSpaceAndComments() }
        guard peek() == UInt8(ascii: "{") else {
            throw Failure(line: line, message: "recipe must be called with a table: recipe { name = …, … }")
        }
        let tableLine = line
        let start = pos
        var depth = 0
        while pos < bytes.count {
            let c = bytes[pos]
            switch c {
            case UInt8(ascii: "{"): depth += 1; pos += 1
            case UInt8(ascii: "}"):
                depth -= 1
                pos += 1
                if depth == 0 {
                    return Located(table: String(decoding: bytes[start..<pos], as: UTF8.self), line: tableLine)
                }
            case UInt8(ascii: "\""), UInt8(ascii: "'"): try skipShortString()
            case UInt8(ascii: "["):
                if let level = longBracketLevel() { try skipLongBracket(level: level) } else { pos += 1 }
            case UInt8(ascii: "-") where peek(1) == UInt8(ascii: "-"): try skipComment()
            case UInt8(ascii: "\n"): line += 1; pos += 1
            default: pos += 1
            }
        }
        throw Failure(line: tableLine, message: "the manifest table is not closed (missing '}')")
    }

    private func peek(_ offset: Int = 0) -> UInt8? {
        pos + offset < bytes.count ? bytes[pos + offset] : nil
    }

    private mutating func skipLine() {
        while let c = peek(), c != UInt8(ascii: "\n") { pos += 1 }
    }

    private mutating func skipSpaceAndComments() throws {
        while let c = peek() {
            if c == UInt8(ascii: "\n") { line += 1; pos += 1 }
            else if c == 0x20 || c == 0x09 || c == 0x0D { pos += 1 }
            else if c == UInt8(ascii: "-") && peek(1) == UInt8(ascii: "-") { try skipComment() }
            else { return }
        }
    }

    private mutating func skipComment() throws {
        pos += 2
        if peek() == UInt8(ascii: "["), let level = longBracketLevel() {
            try skipLongBracket(level: level)
        } else {
            // Lua ends a short comment at either newline byte: a lone `\r` too.
            while let c = peek(), c != UInt8(ascii: "\n"), c != UInt8(ascii: "\r") { pos += 1 }
        }
    }

    private mutating func readIdentifier() -> String {
        let start = pos
        while let c = peek(), c == UInt8(ascii: "_") || (c >= 0x30 && c <= 0x39) || (c | 0x20 >= 0x61 && c | 0x20 <= 0x7A) {
            pos += 1
        }
        return String(decoding: bytes[start..<pos], as: UTF8.self)
    }

    /// At `[`: the level of a long bracket `[==[` (0 for `[[`), or nil.
    private func longBracketLevel() -> Int? {
        var k = pos + 1
        var level = 0
        while k < bytes.count, bytes[k] == UInt8(ascii: "=") { level += 1; k += 1 }
        return k < bytes.count && bytes[k] == UInt8(ascii: "[") ? level : nil
    }

    private mutating func skipLongBracket(level: Int) throws {
        let startLine = line
        pos += level + 2
        let close = [UInt8(ascii: "]")] + Array(repeating: UInt8(ascii: "="), count: level) + [UInt8(ascii: "]")]
        while pos < bytes.count {
            if bytes[pos] == UInt8(ascii: "\n") { line += 1 }
            if bytes[pos] == UInt8(ascii: "]"), bytes[pos...].starts(with: close) {
                pos += close.count
                return
            }
            pos += 1
        }
        throw Failure(line: startLine, message: "unfinished long string or comment")
    }

    private mutating func skipShortString() throws {
        let quote = bytes[pos]
        let startLine = line
        pos += 1
        while let c = peek() {
            pos += 1
            if c == quote { return }
            if c == UInt8(ascii: "\\") {
                if peek() == UInt8(ascii: "z") {
                    // \z skips the following white space, line breaks included.
                    pos += 1
                    while let w = peek(), w == 0x20 || w == 0x09 || w == 0x0D || w == 0x0A || w == 0x0B || w == 0x0C {
                        if w == 0x0A { line += 1 }
                        pos += 1
                    }
                    continue
                }
                if peek() == UInt8(ascii: "\n") { line += 1 }
                pos += 1
            } else if c == UInt8(ascii: "\n") {
                break
            }
        }
        throw Failure(line: startLine, message: "unfinished string")
    }
}
