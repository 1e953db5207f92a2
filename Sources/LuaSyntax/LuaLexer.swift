/// Splits Lua 5.4 source into tokens, with the position of each.
///
/// Comments and white space are skipped. Numbers are kept as written (the checker never
/// needs their value); strings are decoded (`require("a.b")` and `params["x"]` need it).
public struct LuaLexer {
    static let keywords: Set<String> = [
        "and", "break", "do", "else", "elseif", "end", "false", "for", "function", "goto", "if", "in",
        "local", "nil", "not", "or", "repeat", "return", "then", "true", "until", "while",
    ]
    /// Longest first, so `...` wins over `..` and `.`.
    static let symbols: [[UInt8]] = ["...", "..", "::", "<<", ">>", "//", "==", "~=", "<=", ">=",
                                     "+", "-", "*", "/", "%", "^", "#", "&", "~", "|", "<", ">", "=",
                                     "(", ")", "{", "}", "[", "]", ";", ":", ",", "."].map { Array($0.utf8) }

    private let bytes: [UInt8]
    private var index = 0
    private var line = 1
    private var lineStart = 0

    public init(_ source: String) {
        bytes = Array(source.utf8)
        // A first line starting with '#' (a shebang) is skipped, as Lua's loader does.
        if bytes.first == UInt8(ascii: "#") {
            while index < bytes.count, bytes[index] != 10 { index += 1 }
        }
    }

    /// Every token, the last one `endOfFile`.
    public static func tokens(of source: String) throws -> [LuaToken] {
        var lexer = LuaLexer(source)
        var out: [LuaToken] = []
        while true {
            let token = try lexer.next()
            out.append(token)
            if token.kind == .endOfFile { return out }
        }
    }

    private var position: SourcePosition { SourcePosition(line: line, column: index - lineStart + 1) }

    private func peek(_ offset: Int = 0) -> UInt8 {
        index + offset < bytes.count ? bytes[index + offset] : 0
    }

    private mutating func newline() {
        // \r\n and \n\r count as one line break, as in Lua.
        let first = bytes[index]
        index += 1
        if index < bytes.count, bytes[index] == 10 || bytes[index] == 13, bytes[index] != first { index += 1 }
        line += 1
        lineStart = index
    }

    private static func isNameStart(_ c: UInt8) -> Bool {
        (c >= 97 && c <= 122) || (c >= 65 && c <= 90) || c == 95
    }
    private static func isDigit(_ c: UInt8) -> Bool { c >= 48 && c <= 57 }
    private static func isHexDigit(_ c: UInt8) -> Bool {
        isDigit(c) || (c >= 97 && c <= 102) || (c >= 65 && c <= 70)
    }

    public mutating func next() throws -> LuaToken {
        try skipSpaceAndComments()
        let start = position
        guard index < bytes.count else { return LuaToken(kind: .endOfFile, position: start) }
        let c = bytes[index]
        if Self.isNameStart(c) {
            let begin = index
            while index < bytes.count, Self.isNameStart(bytes[index]) || Self.isDigit(bytes[index]) { index += 1 }
            let word = String(decoding: bytes[begin..<index], as: UTF8.self)
            return LuaToken(kind: Self.keywords.contains(word) ? .keyword(word) : .name(word), position: start)
        }
        if Self.isDigit(c) || (c == UInt8(ascii: ".") && Self.isDigit(peek(1))) {
            return LuaToken(kind: .number(readNumber()), position: start)
        }
        if c == UInt8(ascii: "\"") || c == UInt8(ascii: "'") {
            return LuaToken(kind: .string(try readQuoted(start)), position: start)
        }
        if c == UInt8(ascii: "["), let level = longBracketLevel() {
            return LuaToken(kind: .string(try readLong(level: level, start: start)), position: start)
        }
        for symbol in Self.symbols where matches(symbol) {
            index += symbol.count
            return LuaToken(kind: .symbol(String(decoding: symbol, as: UTF8.self)), position: start)
        }
        throw LuaSyntaxError("unexpected character '\(String(decoding: [c], as: UTF8.self))'", at: start)
    }

    private func matches(_ symbol: [UInt8]) -> Bool {
        guard index + symbol.count <= bytes.count else { return false }
        for (i, b) in symbol.enumerated() where bytes[index + i] != b { return false }
        return true
    }

    private mutating func skipSpaceAndComments() throws {
        while index < bytes.count {
            let c = bytes[index]
            if c == 10 || c == 13 {
                newline()
            } else if c == 32 || c == 9 || c == 11 || c == 12 {
                index += 1
            } else if c == UInt8(ascii: "-"), peek(1) == UInt8(ascii: "-") {
                let start = position
                index += 2
                if peek() == UInt8(ascii: "["), let level = longBracketLevel() {
                    _ = try readLong(level: level, start: start)
                } else {
                    while index < bytes.count, bytes[index] != 10, bytes[index] != 13 { index += 1 }
                }
            } else {
                return
            }
        }
    }

    /// At `[`: the level of a long bracket `[==[` (2), or nil if this is no long bracket.
    private func longBracketLevel() -> Int? {
        var i = index + 1
        var level = 0
        while i < bytes.count, bytes[i] == UInt8(ascii: "=") { level += 1; i += 1 }
        return i < bytes.count && bytes[i] == UInt8(ascii: "[") ? level : nil
    }

    private mutating func readLong(level: Int, start: SourcePosition) throws -> String {
        index += level + 2
        // A newline right after the opening bracket is not part of the string.
        if index < bytes.count, bytes[index] == 10 || bytes[index] == 13 { newline() }
        var content: [UInt8] = []
        while index < bytes.count {
            let c = bytes[index]
            if c == UInt8(ascii: "]") {
                var i = index + 1
                var n = 0
                while i < bytes.count, bytes[i] == UInt8(ascii: "=") { n += 1; i += 1 }
                if n == level, i < bytes.count, bytes[i] == UInt8(ascii: "]") {
                    index = i + 1
                    return String(decoding: content, as: UTF8.self)
                }
                content.append(c)
                index += 1
            } else if c == 10 || c == 13 {
                newline()
                content.append(10)
            } else {
                content.append(c)
                index += 1
            }
        }
        throw LuaSyntaxError("unfinished long string or comment", at: start)
    }

    private mutating func readNumber() -> String {
        let begin = index
        var exponents: Set<UInt8> = [UInt8(ascii: "e"), UInt8(ascii: "E")]
        if bytes[index] == UInt8(ascii: "0"), peek(1) == UInt8(ascii: "x") || peek(1) == UInt8(ascii: "X") {
            exponents = [UInt8(ascii: "p"), UInt8(ascii: "P")]
            index += 2
        }
        while index < bytes.count {
            let c = bytes[index]
            if exponents.contains(c), peek(1) == UInt8(ascii: "+") || peek(1) == UInt8(ascii: "-") {
                index += 2
            } else if Self.isHexDigit(c) || c == UInt8(ascii: ".") || Self.isNameStart(c) || Self.isDigit(c) {
                index += 1
            } else {
                break
            }
        }
        return String(decoding: bytes[begin..<index], as: UTF8.self)
    }

    private mutating func readQuoted(_ start: SourcePosition) throws -> String {
        let quote = bytes[index]
        index += 1
        var content: [UInt8] = []
        while true {
            guard index < bytes.count, bytes[index] != 10, bytes[index] != 13 else {
                throw LuaSyntaxError("unfinished string", at: start)
            }
            let c = bytes[index]
            if c == quote { index += 1; return String(decoding: content, as: UTF8.self) }
            if c != UInt8(ascii: "\\") { content.append(c); index += 1; continue }
            index += 1
            guard index < bytes.count else { throw LuaSyntaxError("unfinished string", at: start) }
            let e = bytes[index]
            switch e {
            case UInt8(ascii: "n"): content.append(10); index += 1
            case UInt8(ascii: "t"): content.append(9); index += 1
            case UInt8(ascii: "r"): content.append(13); index += 1
            case UInt8(ascii: "a"): content.append(7); index += 1
            case UInt8(ascii: "b"): content.append(8); index += 1
            case UInt8(ascii: "f"): content.append(12); index += 1
            case UInt8(ascii: "v"): content.append(11); index += 1
            case 10, 13: newline(); content.append(10)
            case UInt8(ascii: "x"):
                index += 1
                var value = 0
                for _ in 0..<2 where index < bytes.count && Self.isHexDigit(bytes[index]) {
                    value = value * 16 + Int(Self.hexValue(bytes[index]))
                    index += 1
                }
                content.append(UInt8(value & 0xFF))
            case UInt8(ascii: "z"):
                index += 1
                while index < bytes.count {
                    let s = bytes[index]
                    if s == 10 || s == 13 { newline() } else if s == 32 || s == 9 || s == 11 || s == 12 { index += 1 } else { break }
                }
            case UInt8(ascii: "u"):
                index += 2   // `u{`
                var value: UInt32 = 0
                while index < bytes.count, Self.isHexDigit(bytes[index]) {
                    value = (value &* 16) &+ UInt32(Self.hexValue(bytes[index]))
                    index += 1
                }
                index += 1   // `}`
                content.append(contentsOf: Array(String(Unicode.Scalar(value).map(Character.init) ?? "\u{FFFD}").utf8))
            default:
                if Self.isDigit(e) {
                    var value = 0
                    for _ in 0..<3 where index < bytes.count && Self.isDigit(bytes[index]) {
                        value = value * 10 + Int(bytes[index] - 48)
                        index += 1
                    }
                    content.append(UInt8(value & 0xFF))
                } else {
                    content.append(e)   // \\ \" \' and anything Lua itself would have refused
                    index += 1
                }
            }
        }
    }

    private static func hexValue(_ c: UInt8) -> UInt8 {
        isDigit(c) ? c - 48 : (c | 0x20) - 87
    }
}
