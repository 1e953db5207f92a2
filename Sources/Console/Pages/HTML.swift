/// A piece of HTML markup, built so that text cannot become markup by mistake:
/// in `"<td>\(name)</td>" as HTML` a `String` is escaped (``HTML/escape(_:)``), an
/// ``HTML`` is inserted as is, and numbers are written in decimal. Nothing else can be
/// interpolated, so every piece of journal, recipe or Hub text goes through the one
/// escaping function.
public struct HTML: Sendable, Equatable, ExpressibleByStringInterpolation, CustomStringConvertible {
    /// The markup.
    public private(set) var markup: String

    public init(stringLiteral value: String) { markup = value }

    /// Markup written by the console itself (never text from elsewhere).
    public init(trusted markup: String) { self.markup = markup }

    public init(stringInterpolation: StringInterpolation) { markup = stringInterpolation.markup }

    public var description: String { markup }

    public static func + (a: HTML, b: HTML) -> HTML { HTML(trusted: a.markup + b.markup) }

    public static func += (a: inout HTML, b: HTML) { a.markup += b.markup }

    /// The pieces one after another.
    public static func joined(_ pieces: [HTML]) -> HTML { HTML(trusted: pieces.map(\.markup).joined()) }

    public struct StringInterpolation: StringInterpolationProtocol {
        var markup = ""

        public init(literalCapacity: Int, interpolationCount: Int) {
            markup.reserveCapacity(literalCapacity + interpolationCount * 16)
        }

        public mutating func appendLiteral(_ literal: String) { markup += literal }
        /// Text: escaped.
        public mutating func appendInterpolation(_ text: String) { markup += HTML.escape(text) }
        /// Markup: as is.
        public mutating func appendInterpolation(_ html: HTML) { markup += html.markup }
        public mutating func appendInterpolation(_ pieces: [HTML]) { markup += pieces.map(\.markup).joined() }
        public mutating func appendInterpolation<N: BinaryInteger>(_ number: N) { markup += String(number) }
    }

    /// Untrusted text shown inline: escaped (at most `budget` bytes of it, see
    /// ``escape(_:budget:)``), in a `<bdi>` so right-to-left text cannot reorder what
    /// stands around it.
    public static func field(_ text: String, budget: Int = 2000) -> HTML {
        HTML(trusted: "<bdi>" + escape(text, budget: budget) + "</bdi>")
    }

    /// Untrusted text, escaped, at most `budget` bytes of it (for a block such as `<pre>`).
    public static func text(_ text: String, budget: Int) -> HTML { HTML(trusted: escape(text, budget: budget)) }

    /// `text` made safe in HTML element content and in quoted attribute values:
    /// `& < > " '` become character references; control characters other than tab
    /// and line feed (NUL, the rest of C0, DEL, C1), the bidirectional formatting
    /// characters (U+061C, U+200E, U+200F, U+202A–U+202E, U+2066–U+2069), the line and
    /// paragraph separators and the invisible U+200B, U+2060 and U+FEFF are shown as
    /// `‹U+202E›`: what a recipe printed cannot hide or reorder text on the page.
    ///
    /// `budget`: the most bytes the escaped text may take; text beyond it is left out
    /// and said so (`… (N more characters)`), so no journal text can make a page large.
    public static func escape(_ text: String, budget: Int = .max) -> String {
        var out = ""
        out.reserveCapacity(min(text.utf8.count, budget))
        var scalars = text.unicodeScalars.makeIterator()
        var used = 0
        while let scalar = scalars.next() {
            let piece: String
            switch scalar {
            case "&": piece = "&amp;"
            case "<": piece = "&lt;"
            case ">": piece = "&gt;"
            case "\"": piece = "&quot;"
            case "'": piece = "&#39;"
            case "\t", "\n": piece = String(scalar)
            default: piece = isHidden(scalar.value) ? "‹U+" + hex4(scalar.value) + "›" : String(scalar)
            }
            let size = piece.utf8.count
            if used + size > budget {
                var left = 1
                while scalars.next() != nil { left += 1 }
                out += "… (\(left) more characters)"
                break
            }
            used += size
            out += piece
        }
        return out
    }

    /// Whether `value` is a character escape shows by its code point instead.
    static func isHidden(_ value: UInt32) -> Bool {
        switch value {
        case 0x00...0x1F, 0x7F...0x9F: true
        case 0x061C, 0x200B, 0x200E, 0x200F, 0x2028, 0x2029, 0x202A...0x202E, 0x2060, 0x2066...0x2069, 0xFEFF: true
        default: false
        }
    }

    private static func hex4(_ value: UInt32) -> String {
        let digits = String(value, radix: 16, uppercase: true)
        return String(repeating: "0", count: max(0, 4 - digits.count)) + digits
    }
}

/// Percent-encoding for the links the console writes.
public enum URLText {
    /// `text` as one path segment or query value: every byte but the unreserved ones
    /// (`A–Z a–z 0–9 - . _ ~`) percent-encoded, so `/`, `?`, `&`, `#` and `@` stay data.
    public static func component(_ text: String) -> String {
        var out = ""
        for byte in text.utf8 {
            switch byte {
            case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"),
                 UInt8(ascii: "0")...UInt8(ascii: "9"), UInt8(ascii: "-"), UInt8(ascii: "."), UInt8(ascii: "_"),
                 UInt8(ascii: "~"):
                out.unicodeScalars.append(Unicode.Scalar(byte))
            default:
                let hex = String(byte, radix: 16, uppercase: true)
                out += "%" + (hex.count == 1 ? "0" + hex : hex)
            }
        }
        return out
    }

    /// `path?name=value&…` with each name and value encoded; pairs with an empty value are left out.
    public static func link(_ path: String, _ query: [(String, String)]) -> String {
        let pairs = query.filter { !$0.1.isEmpty }.map { component($0.0) + "=" + component($0.1) }
        return pairs.isEmpty ? path : path + "?" + pairs.joined(separator: "&")
    }
}
