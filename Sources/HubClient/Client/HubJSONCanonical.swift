import Foundation

/// Canonical JSON straight from a response's bytes: for every input, the same bytes
/// as `HubJSON.parse(input).encoded()` (sorted keys, no whitespace, integral numbers
/// without a fraction), or the same syntax error — without building `HubJSON` values.
///
/// Why: an export streams hundreds of thousands of list items to disk; parsing each
/// into dictionaries only to sort and write them again was most of the client's time.
///
/// How it stays exact: a fast scanner handles the common shapes (ASCII keys without
/// escapes, strings without escapes, integers of up to 15 digits, literals, nesting
/// below the parser's limit). Anything else in a value — an escape, a fraction, a
/// duplicate key, a syntax error — sends that value through the real parser and
/// writer instead, so the output is theirs by construction.
enum HubJSONCanonical {
    /// The `data` items of a list page in canonical form, and its decoded `page` object.
    struct Page {
        var items: [Data]
        /// `{next_cursor, has_more}`; nil when the body had no `page` member.
        var page: HubJSON?
        /// How the page was read: `scanner` when the page's framing was common (items
        /// may still have taken the parser, see `parsedItems`), `parser` when the whole
        /// body went through `HubJSON.parse`.
        var route: Route = .scanner
        /// Items that went through the parser and writer (all of them on the `parser` route).
        var parsedItems = 0
    }

    /// Which way a value went: the fast scanner, or the real parser and writer. Tests
    /// read it to check that each path runs for the inputs meant for it.
    enum Route: Sendable, Equatable { case scanner, parser }

    /// Scans a list page body (`{"data":[…],"page":{…}}`, members in any order).
    /// - Returns: nil when the body is a JSON object without a `data` array.
    /// - Throws: `HubJSONSyntaxError` when the body is not JSON.
    static func page(_ body: Data) throws -> Page? {
        let fast: Result<Page?, Error> = body.withUnsafeBytes { raw in
            var scanner = Scanner(raw.bindMemory(to: UInt8.self))
            return Result { try scanner.page() }
        }
        if case .success(let page) = fast { return page }
        // The page itself is unusual (a duplicate member, a syntax error): the parser decides.
        guard case .object(let members) = try HubJSON.parse(body),
              case .array(let items)? = members["data"] else { return nil }
        return Page(items: items.map { $0.encoded() }, page: members["page"], route: .parser, parsedItems: items.count)
    }

    /// The canonical bytes of the one JSON value in `bytes`.
    static func canonical(_ bytes: Data) throws -> Data { try canonicalRouted(bytes).bytes }

    /// `canonical(bytes)` and the route it took.
    static func canonicalRouted(_ bytes: Data) throws -> (bytes: Data, route: Route) {
        let fast: [UInt8]? = bytes.withUnsafeBytes { raw in
            var scanner = Scanner(raw.bindMemory(to: UInt8.self))
            var out = [UInt8]()
            out.reserveCapacity(raw.count)
            scanner.skipWhitespace()
            guard (try? scanner.value(into: &out, depth: 0)) != nil else { return nil }
            scanner.skipWhitespace()
            return scanner.atEnd ? out : nil
        }
        if let fast { return (Data(fast), .scanner) }
        return (try HubJSON.parse(bytes).encoded(), .parser)
    }

    /// The fast path gave up: the value must go through the parser and writer.
    struct Unusual: Error {}

    /// The parser's nesting limit: a value this deep takes the slow path (which refuses it).
    static let maxDepth = 512

    struct Scanner {
        let bytes: UnsafeBufferPointer<UInt8>
        var index = 0

        init(_ bytes: UnsafeBufferPointer<UInt8>) { self.bytes = bytes }

        var atEnd: Bool { index == bytes.count }
        private var current: UInt8? { index < bytes.count ? bytes[index] : nil }

        mutating func skipWhitespace() {
            while index < bytes.count {
                let c = bytes[index]
                guard c == 0x20 || c == 0x0A || c == 0x0D || c == 0x09 else { return }
                index += 1
            }
        }

        private mutating func expect(_ byte: UInt8) throws {
            guard current == byte else { throw Unusual() }
            index += 1
        }

        /// The list page: items canonical one by one (an unusual item alone goes slow).
        mutating func page() throws -> Page? {
            skipWhitespace()
            try expect(UInt8(ascii: "{"))
            var items: [Data]?
            var parsedItems = 0
            var page: HubJSON?
            var seen: Set<String> = []
            skipWhitespace()
            if current == UInt8(ascii: "}") { index += 1 } else {
                while true {
                    skipWhitespace()
                    let key = try plainKey()
                    guard seen.insert(key).inserted else { throw Unusual() }
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    skipWhitespace()
                    switch key {
                    case "data":
                        guard current == UInt8(ascii: "[") else { throw Unusual() }
                        (items, parsedItems) = try itemsOfArray()
                    case "page":
                        let start = index
                        try skipValue(depth: 1)
                        page = try HubJSON.parse(Data(UnsafeBufferPointer(rebasing: bytes[start..<index])))
                    default:
                        try skipValue(depth: 1)
                    }
                    skipWhitespace()
                    if current == UInt8(ascii: ",") { index += 1; continue }
                    try expect(UInt8(ascii: "}"))
                    break
                }
            }
            skipWhitespace()
            guard atEnd else { throw Unusual() }
            return items.map { Page(items: $0, page: page, route: .scanner, parsedItems: parsedItems) }
        }

        /// The array's items in canonical form, and how many took the parser.
        private mutating func itemsOfArray() throws -> ([Data], Int) {
            index += 1
            var items: [Data] = []
            var parsed = 0
            var out = [UInt8]()
            skipWhitespace()
            if current == UInt8(ascii: "]") { index += 1; return (items, 0) }
            while true {
                skipWhitespace()
                let start = index
                out.removeAll(keepingCapacity: true)
                do {
                    try value(into: &out, depth: 2)
                    items.append(Data(out))
                } catch {
                    index = start
                    try skipValue(depth: 2)
                    let slice = Data(UnsafeBufferPointer(rebasing: bytes[start..<index]))
                    items.append(try HubJSON.parse(slice).encoded())
                    parsed += 1
                }
                skipWhitespace()
                if current == UInt8(ascii: ",") { index += 1; continue }
                try expect(UInt8(ascii: "]"))
                return (items, parsed)
            }
        }

        /// Writes the canonical form of the value at `index`; throws `Unusual` for any
        /// shape it does not handle (the caller then takes the slow path).
        mutating func value(into out: inout [UInt8], depth: Int) throws {
            guard depth < HubJSONCanonical.maxDepth, let c = current else { throw Unusual() }
            switch c {
            case UInt8(ascii: "{"): try object(into: &out, depth: depth)
            case UInt8(ascii: "["):
                index += 1
                out.append(UInt8(ascii: "["))
                skipWhitespace()
                if current == UInt8(ascii: "]") { index += 1; out.append(UInt8(ascii: "]")); return }
                while true {
                    skipWhitespace()
                    try value(into: &out, depth: depth + 1)
                    skipWhitespace()
                    if current == UInt8(ascii: ",") { index += 1; out.append(UInt8(ascii: ",")); continue }
                    try expect(UInt8(ascii: "]"))
                    out.append(UInt8(ascii: "]"))
                    return
                }
            case UInt8(ascii: "\""):
                let range = try plainString()
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[range]))
                out.append(UInt8(ascii: "\""))
            case UInt8(ascii: "t"): try literal("true", into: &out)
            case UInt8(ascii: "f"): try literal("false", into: &out)
            case UInt8(ascii: "n"): try literal("null", into: &out)
            default: try integer(into: &out)
            }
        }

        private mutating func object(into out: inout [UInt8], depth: Int) throws {
            index += 1
            // Members' values are written to `values`; keys stay ranges of the input.
            var members: [(key: Range<Int>, value: Range<Int>)] = []
            var values = [UInt8]()
            skipWhitespace()
            if current == UInt8(ascii: "}") { index += 1 } else {
                while true {
                    skipWhitespace()
                    guard current == UInt8(ascii: "\"") else { throw Unusual() }
                    let key = try plainString()
                    guard bytes[key].allSatisfy({ $0 < 0x80 }) else { throw Unusual() }
                    skipWhitespace()
                    try expect(UInt8(ascii: ":"))
                    skipWhitespace()
                    let valueStart = values.count
                    try value(into: &values, depth: depth + 1)
                    members.append((key, valueStart..<values.count))
                    skipWhitespace()
                    if current == UInt8(ascii: ",") { index += 1; continue }
                    try expect(UInt8(ascii: "}"))
                    break
                }
            }
            let bytes = self.bytes
            members.sort { bytes[$0.key].lexicographicallyPrecedes(bytes[$1.key]) }
            out.append(UInt8(ascii: "{"))
            for (n, member) in members.enumerated() {
                if n > 0 {
                    // Equal neighbours after sorting: a duplicate key (the parser keeps the last).
                    guard !bytes[members[n - 1].key].elementsEqual(bytes[member.key]) else { throw Unusual() }
                    out.append(UInt8(ascii: ","))
                }
                out.append(UInt8(ascii: "\""))
                out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[member.key]))
                out.append(contentsOf: [UInt8(ascii: "\""), UInt8(ascii: ":")])
                out.append(contentsOf: values[member.value])
            }
            out.append(UInt8(ascii: "}"))
        }

        /// A string without escapes or control characters, in valid UTF-8: the range of
        /// its contents (the writer would emit exactly those bytes).
        private mutating func plainString() throws -> Range<Int> {
            index += 1
            let start = index
            var ascii = true
            while let c = current {
                if c == UInt8(ascii: "\"") {
                    let range = start..<index
                    index += 1
                    if !ascii, String(validating: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self) == nil {
                        throw Unusual()
                    }
                    return range
                }
                if c == UInt8(ascii: "\\") || c < 0x20 { throw Unusual() }
                if c >= 0x80 { ascii = false }
                index += 1
            }
            throw Unusual()
        }

        /// A member name of the page object, as a String (plain strings only).
        private mutating func plainKey() throws -> String {
            guard current == UInt8(ascii: "\"") else { throw Unusual() }
            let range = try plainString()
            return String(decoding: UnsafeBufferPointer(rebasing: bytes[range]), as: UTF8.self)
        }

        private mutating func literal(_ text: StaticString, into out: inout [UInt8]) throws {
            let literal = UnsafeBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount)
            guard index + literal.count <= bytes.count,
                  bytes[index..<(index + literal.count)].elementsEqual(literal) else { throw Unusual() }
            index += literal.count
            out.append(contentsOf: literal)
        }

        /// An integer of 1–15 digits with no leading zero and not `-0`: written as it
        /// stands (a Double holds it exactly and prints the same digits).
        private mutating func integer(into out: inout [UInt8]) throws {
            let start = index
            if current == UInt8(ascii: "-") { index += 1 }
            let digitsStart = index
            while let c = current, c >= 0x30 && c <= 0x39 { index += 1 }
            let digits = index - digitsStart
            guard (1...15).contains(digits), bytes[digitsStart] != 0x30 || (digits == 1 && digitsStart == start) else {
                throw Unusual()
            }
            if let c = current, c == UInt8(ascii: ".") || c == UInt8(ascii: "e") || c == UInt8(ascii: "E") { throw Unusual() }
            out.append(contentsOf: UnsafeBufferPointer(rebasing: bytes[start..<index]))
        }

        /// Moves past one value without writing it, following JSON's framing (strings
        /// with escapes, nesting); the value is checked later by whoever parses it.
        mutating func skipValue(depth: Int) throws {
            guard depth < HubJSONCanonical.maxDepth, let c = current else { throw Unusual() }
            switch c {
            case UInt8(ascii: "{"), UInt8(ascii: "["):
                let close = c == UInt8(ascii: "{") ? UInt8(ascii: "}") : UInt8(ascii: "]")
                index += 1
                skipWhitespace()
                if current == close { index += 1; return }
                while true {
                    skipWhitespace()
                    if close == UInt8(ascii: "}") {
                        try skipValue(depth: depth + 1)   // the key
                        skipWhitespace()
                        try expect(UInt8(ascii: ":"))
                        skipWhitespace()
                    }
                    try skipValue(depth: depth + 1)
                    skipWhitespace()
                    if current == UInt8(ascii: ",") { index += 1; continue }
                    try expect(close)
                    return
                }
            case UInt8(ascii: "\""):
                index += 1
                while let c = current {
                    index += 1
                    if c == UInt8(ascii: "\"") { return }
                    if c == UInt8(ascii: "\\") { index += 1 }
                }
                throw Unusual()
            default:
                let start = index
                while let c = current, c != UInt8(ascii: ","), c != UInt8(ascii: "]"), c != UInt8(ascii: "}"),
                      c != 0x20, c != 0x0A, c != 0x0D, c != 0x09 { index += 1 }
                guard index > start else { throw Unusual() }
            }
        }
    }
}
