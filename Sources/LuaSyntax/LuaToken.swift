/// A place in a Lua source text: 1-based line, and 1-based column counted in bytes
/// (as Lua and luacheck count them).
public struct SourcePosition: Sendable, Equatable, Comparable, CustomStringConvertible {
    public let line: Int
    public let column: Int

    public init(line: Int, column: Int) {
        self.line = line
        self.column = column
    }

    public var description: String { "\(line):\(column)" }

    public static func < (a: SourcePosition, b: SourcePosition) -> Bool {
        a.line != b.line ? a.line < b.line : a.column < b.column
    }
}

/// One token of Lua 5.4 source.
public struct LuaToken: Sendable, Equatable {
    public enum Kind: Sendable, Equatable {
        case name(String)
        case keyword(String)
        /// A string literal, its escapes decoded (bytes that are not UTF-8 are replaced).
        case string(String)
        case number(String)
        /// An operator or punctuation: `+`, `..`, `::`, `...`, …
        case symbol(String)
        case endOfFile
    }

    public let kind: Kind
    public let position: SourcePosition

    public init(kind: Kind, position: SourcePosition) {
        self.kind = kind
        self.position = position
    }
}

/// Why a text is not Lua this parser accepts. Lua's own parser judges syntax first
/// (`hubscript check` runs it before this one), so in practice this names a construct
/// the parser lacks, at its position.
public struct LuaSyntaxError: Error, Sendable, Equatable, CustomStringConvertible {
    public let message: String
    public let position: SourcePosition

    public init(_ message: String, at position: SourcePosition) {
        self.message = message
        self.position = position
    }

    public var description: String { "\(position): \(message)" }
}
