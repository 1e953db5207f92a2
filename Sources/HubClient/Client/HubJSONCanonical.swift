import Foundation
import JSONKit

/// Canonical JSON straight from a response's bytes: for every input, the same bytes
/// as `HubJSON.parse(input).encoded()` (sorted keys, no whitespace, integral numbers
/// without a fraction), or the same syntax error — without building `HubJSON` values.
///
/// Why: an export streams hundreds of thousands of list items to disk; parsing each
/// into dictionaries only to sort and write them again was most of the client's time.
///
/// How it stays exact: the one parser (`JSONReader`) reads the bytes into `Writer`,
/// which writes the common shapes as they stand (ASCII keys without escapes, strings
/// without escapes, integers of up to 15 digits, literals), sorting each object's
/// members. Anything else in a value — an escape, a fraction, a duplicate key — sends
/// that value through `HubJSON`'s builder and writer instead, so the output is theirs by
/// construction; a syntax error is the parser's either way.
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

    /// Reads a list page body (`{"data":[…],"page":{…}}`, members in any order).
    /// - Returns: nil when the body is a JSON object without a `data` array.
    /// - Throws: `HubJSONSyntaxError` when the body is not JSON.
    static func page(_ body: Data) throws -> Page? {
        let fast: Result<Page?, Error> = body.withUnsafeBytes { raw in
            var reader = JSONReader(raw.bindMemory(to: UInt8.self), maxDepth: HubJSON.maxDepth)
            return Result { try commonPage(&reader) }
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
        var writer = Writer()
        do {
            _ = try JSONReader.parse(bytes, maxDepth: HubJSON.maxDepth, into: &writer)
            return (Data(writer.out), .scanner)
        } catch is Unusual {
            return (try HubJSON.parse(bytes).encoded(), .parser)
        }
    }

    /// The common shape gave way: the value must go through the parser and writer.
    struct Unusual: Error {}

    /// The list page, its outer object walked here: items canonical one by one (an
    /// unusual item alone goes through the parser), `page` decoded, other members
    /// checked and skipped. Throws `Unusual` for a page whose member names are not plain
    /// or repeat; any error sends the whole body to the parser.
    private static func commonPage(_ reader: inout JSONReader) throws -> Page? {
        var items: [Data]?
        var parsedItems = 0
        var page: HubJSON?
        var seen: Set<String> = []
        reader.skipWhitespace()
        guard reader.current == UInt8(ascii: "{") else { throw Unusual() }
        try reader.readElements(closing: UInt8(ascii: "}"), of: "an object") { reader in
            guard reader.current == UInt8(ascii: "\"") else { throw Unusual() }
            let key = try reader.string { $0.hadEscapes ? nil : $0.validated() }
            guard let key, seen.insert(key).inserted else { throw Unusual() }
            reader.skipWhitespace()
            try reader.expect(UInt8(ascii: ":"), "expected ':'")
            reader.skipWhitespace()
            switch key {
            case "data":
                guard reader.current == UInt8(ascii: "[") else { throw Unusual() }
                (items, parsedItems) = try itemsOfArray(&reader)
            case "page":
                var builder = HubJSONBuilder()
                page = try reader.value(into: &builder, depth: 1)
            default:
                var validator = JSONValidator()
                try reader.value(into: &validator, depth: 1)
            }
        }
        try reader.finish()
        return items.map { Page(items: $0, page: page, route: .scanner, parsedItems: parsedItems) }
    }

    /// The array's items in canonical form, and how many took the parser.
    private static func itemsOfArray(_ reader: inout JSONReader) throws -> ([Data], Int) {
        var items: [Data] = []
        var parsed = 0
        var writer = Writer()
        try reader.readElements(closing: UInt8(ascii: "]"), of: "an array") { reader in
            let start = reader.position
            writer.out.removeAll(keepingCapacity: true)
            do {
                try reader.value(into: &writer, depth: 2)
                items.append(Data(writer.out))
            } catch is Unusual {
                reader.position = start
                var builder = HubJSONBuilder()
                items.append(try reader.value(into: &builder, depth: 2).encoded())
                parsed += 1
            }
        }
        return (items, parsed)
    }

    /// Writes the canonical form of what `JSONReader` reads, for the common shapes only
    /// (which it writes as they stand, byte for byte): strings without escapes in valid
    /// UTF-8, member names in plain ASCII, each once per object, integers of up to 15
    /// digits (not `-0`), literals. Anything else throws `Unusual`.
    struct Writer: JSONBuilder {
        var out: [UInt8] = []
        /// A copy of an object's members while they are put in order.
        var scratch: [UInt8] = []

        struct Object {
            /// Where the object's first member starts in `out`.
            var start: Int
            var members: [(key: Range<Int>, bytes: Range<Int>)]
        }

        mutating func null() { JSONWriter.writeNull(into: &out) }
        mutating func bool(_ value: Bool) { JSONWriter.writeBool(value, into: &out) }

        /// An integer of 1–15 digits with no leading zero and not `-0`: written as it
        /// stands (a Double holds it exactly and prints the same digits).
        mutating func number(_ number: JSONNumber) throws {
            let digits = number.bytes.count - (number.bytes[0] == UInt8(ascii: "-") ? 1 : 0)
            guard digits <= 15, number.isInteger,
                  !(number.bytes.count == 2 && number.bytes[1] == UInt8(ascii: "0")) else { throw Unusual() }
            out.append(contentsOf: number.bytes)
        }

        /// A string without escapes in valid UTF-8: written as it stands.
        mutating func string(_ string: JSONString) throws {
            guard !string.hadEscapes, string.isASCII || string.validated() != nil else { throw Unusual() }
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: string.bytes)
            out.append(UInt8(ascii: "\""))
        }

        mutating func beginObject() -> Object {
            out.append(UInt8(ascii: "{"))
            var members: [(key: Range<Int>, bytes: Range<Int>)] = []
            members.reserveCapacity(16)
            return Object(start: out.count, members: members)
        }

        /// Writes `"key":` (after a comma if need be) and returns where the member starts.
        mutating func key(_ key: JSONString, in object: inout Object) throws -> (key: Range<Int>, start: Int) {
            guard !key.hadEscapes, key.isASCII else { throw Unusual() }
            if !object.members.isEmpty { out.append(UInt8(ascii: ",")) }
            let start = out.count
            out.append(UInt8(ascii: "\""))
            out.append(contentsOf: key.bytes)
            out.append(UInt8(ascii: "\""))
            out.append(UInt8(ascii: ":"))
            return (start + 1..<start + 1 + key.bytes.count, start)
        }

        mutating func member(_ key: (key: Range<Int>, start: Int), _ value: Void, in object: inout Object) {
            object.members.append((key.key, key.start..<out.count))
        }

        /// Puts the members in key order, unless they already are; equal neighbours after
        /// sorting are a repeated member (the parser keeps the last): `Unusual`.
        mutating func endObject(_ object: Object) throws {
            var members = object.members
            let sorted = try out.withUnsafeBufferPointer { out in
                /// Compares two keys' bytes (ASCII, so byte order is `String` order).
                func order(_ a: Range<Int>, _ b: Range<Int>) -> Int {
                    let n = memcmp(out.baseAddress! + a.lowerBound, out.baseAddress! + b.lowerBound, min(a.count, b.count))
                    return n != 0 ? Int(n) : a.count - b.count
                }
                if members.indices.dropFirst().allSatisfy({ order(members[$0 - 1].key, members[$0].key) < 0 }) { return true }
                members.sort { order($0.key, $1.key) < 0 }
                for n in members.indices.dropFirst() where order(members[n - 1].key, members[n].key) == 0 { throw Unusual() }
                return false
            }
            if !sorted {
                scratch.removeAll(keepingCapacity: true)
                scratch.append(contentsOf: out[object.start...])
                out.removeSubrange(object.start...)
                for (n, member) in members.enumerated() {
                    if n > 0 { out.append(UInt8(ascii: ",")) }
                    out.append(contentsOf: scratch[(member.bytes.lowerBound - object.start)..<(member.bytes.upperBound - object.start)])
                }
            }
            out.append(UInt8(ascii: "}"))
        }

        mutating func beginArray() -> Int {
            out.append(UInt8(ascii: "["))
            return 0
        }

        mutating func willReadElement(in count: inout Int) {
            if count > 0 { out.append(UInt8(ascii: ",")) }
            count += 1
        }

        mutating func element(_ value: Void, in count: inout Int) {}
        mutating func endArray(_ count: Int) { out.append(UInt8(ascii: "]")) }
    }
}
