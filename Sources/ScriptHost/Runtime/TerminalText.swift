import SystemText

/// Makes recipe-controlled text safe to show on a terminal.
///
/// A recipe controls much of what people read: printed lines, log lines, write
/// summaries and paths, manifest descriptions, error messages. Raw, a carriage return or
/// an escape sequence in that text could rewrite what is already on the screen (hide a
/// planted write in `hubscript plan`'s table, forge a `done:` line), and a bidi override
/// could reorder what follows it. So every human-facing line goes through this escaper,
/// which turns each such character into a visible escape:
///
/// | character | shown as |
/// |---|---|
/// | ESC (U+001B) | `\e` |
/// | CR, LF, TAB (when not kept) | `\r`, `\n`, `\t` |
/// | other C0 controls, DEL | `\x07`, `\x7F`, … |
/// | C1 controls (U+0080–U+009F) | `\u{0085}`, `\u{009B}`, … |
/// | bidi embeddings, overrides, isolates (U+202A–U+202E, U+2066–U+2069) | `\u{202E}`, … |
/// | bidi marks (U+061C, U+200E, U+200F), zero-width characters (U+200B–U+200D, U+2060–U+2064, U+FEFF), line and paragraph separators (U+2028, U+2029), interlinear annotation (U+FFF9–U+FFFB) | `\u{200E}`, `\u{2028}`, … |
/// | bytes that are not UTF-8 (printed Lua strings only) | `\xFF`, … |
///
/// Backslashes are left alone: the escapes are for people to read, not to decode
/// (`--json` output is exact JSON and does not go through here).
///
/// `Keep` says which layout characters the caller owns: a printed line keeps its line
/// breaks and tabs; a log line keeps tabs; a table cell or an id keeps neither.
public enum TerminalText {
    public struct Keep: OptionSet, Sendable {
        public let rawValue: UInt8
        public init(rawValue: UInt8) { self.rawValue = rawValue }
        /// `\n` stays a line break.
        public static let lineBreaks = Keep(rawValue: 1)
        /// `\t` stays a tab.
        public static let tabs = Keep(rawValue: 2)
        /// Free text: line breaks and tabs stay (printed lines, error messages).
        public static let text: Keep = [.lineBreaks, .tabs]
        /// One line: tabs stay (a log line, a warning).
        public static let line: Keep = [.tabs]
        /// A field inside a line or a table cell: nothing stays.
        public static let field: Keep = []
    }

    /// `text` with every control character, bidi control and (for `.field`) tab and
    /// line break shown as a visible escape. Returns `text` itself when nothing needs it.
    public static func escaped(_ text: String, keeping keep: Keep = .field) -> String {
        var text = text
        return text.withUTF8 { utf8 in
            let bytes = UnsafeRawBufferPointer(utf8)
            guard needsEscaping(bytes, keeping: keep) else { return nil }
            var out: [UInt8] = []
            out.reserveCapacity(bytes.count + 16)
            escape(bytes, keeping: keep, into: &out)
            return String(decoding: out, as: UTF8.self)
        } ?? text
    }

    /// A field or table cell: `escaped(text, keeping: .field)`.
    public static func field(_ text: String) -> String { escaped(text, keeping: .field) }
    /// One line of text that may hold tabs: `escaped(text, keeping: .line)`.
    public static func line(_ text: String) -> String { escaped(text, keeping: .line) }
    /// Free text whose line breaks are the caller's: `escaped(text, keeping: .text)`.
    public static func text(_ text: String) -> String { escaped(text, keeping: .text) }

    /// True if `escape` would change `bytes`.
    public static func needsEscaping(_ bytes: UnsafeRawBufferPointer, keeping keep: Keep) -> Bool {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return false }
        let end = bytes.count
        var i = 0
        while i < end {
            let b = base[i]
            if b >= 0x20 && b < 0x7F { i += 1; continue }
            if b < 0x80 {
                guard (b == 0x0A && keep.contains(.lineBreaks)) || (b == 0x09 && keep.contains(.tabs)) else { return true }
                i += 1
                continue
            }
            let step = UTF8Step(base, i, end)
            guard let scalar = step.scalar, !isHidden(scalar) else { return true }
            i += step.length
        }
        return false
    }

    /// Streams `bytes` (UTF-8, possibly ill-formed) into `sink`, escaped. Runs that need
    /// no escaping are handed over as slices of `bytes` (no copy), so a large clean
    /// string reaches the sink in one piece.
    public static func escape<Sink: ByteSink>(_ bytes: UnsafeRawBufferPointer, keeping keep: Keep,
                                              into sink: inout Sink) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let end = bytes.count
        let keepLineBreaks = keep.contains(.lineBreaks), keepTabs = keep.contains(.tabs)
        var runStart = 0
        var i = 0
        while i < end {
            let b = base[i]
            if b >= 0x20 && b < 0x7F { i += 1; continue }
            if b < 0x80 {
                if (b == 0x0A && keepLineBreaks) || (b == 0x09 && keepTabs) { i += 1; continue }
                sink.put(UnsafeRawBufferPointer(start: base + runStart, count: i - runStart))
                putEscape(ofASCII: b, into: &sink)
                i += 1
                runStart = i
                continue
            }
            let step = UTF8Step(base, i, end)
            if let scalar = step.scalar, !isHidden(scalar) { i += step.length; continue }
            sink.put(UnsafeRawBufferPointer(start: base + runStart, count: i - runStart))
            if let scalar = step.scalar {
                putEscape(ofScalar: scalar, into: &sink)
            } else {
                for k in 0..<step.length { putHex(base[i + k], into: &sink) }
            }
            i += step.length
            runStart = i
        }
        sink.put(UnsafeRawBufferPointer(start: base + runStart, count: end - runStart))
    }

    /// True for every character this escaper never shows raw: C0 controls (tab and line
    /// break included), DEL, C1 controls, bidi embeddings, overrides and isolates.
    public static func isControl(_ scalar: Unicode.Scalar) -> Bool {
        scalar.value < 0x20 || scalar.value == 0x7F || isHidden(scalar.value)
    }

    /// C1 controls, bidi controls and marks, zero-width and separator characters:
    /// everything that changes what a line looks like without showing itself.
    @inline(__always)
    static func isHidden(_ scalar: UInt32) -> Bool {
        switch scalar {
        case 0x80...0x9F, 0x061C, 0x200B...0x200F, 0x2028...0x202E, 0x2060...0x2064, 0x2066...0x2069,
             0xFEFF, 0xFFF9...0xFFFB:
            return true
        default:
            return false
        }
    }

    private static func putEscape<Sink: ByteSink>(ofASCII b: UInt8, into sink: inout Sink) {
        switch b {
        case 0x1B: sink.put(ascii: "\\e")
        case 0x0D: sink.put(ascii: "\\r")
        case 0x0A: sink.put(ascii: "\\n")
        case 0x09: sink.put(ascii: "\\t")
        default: putHex(b, into: &sink)
        }
    }

    /// `\xNN`.
    private static func putHex<Sink: ByteSink>(_ b: UInt8, into sink: inout Sink) {
        let text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "x"), Hex.digit(b >> 4, uppercase: true), Hex.digit(b, uppercase: true)]
        text.withUnsafeBytes { sink.put($0) }
    }

    /// `\u{0085}`, `\u{202E}`: four hex digits.
    private static func putEscape<Sink: ByteSink>(ofScalar scalar: UInt32, into sink: inout Sink) {
        var text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "{")]
        for shift in stride(from: 12, through: 0, by: -4) { text.append(Hex.digit(UInt8(truncatingIfNeeded: scalar >> UInt32(shift)), uppercase: true)) }
        text.append(UInt8(ascii: "}"))
        text.withUnsafeBytes { sink.put($0) }
    }
}

/// Where streamed bytes go: an array, a file descriptor's line writer.
public protocol ByteSink {
    mutating func put(_ bytes: UnsafeRawBufferPointer)
}

extension ByteSink {
    /// Puts ASCII text (escapes, JSON punctuation).
    mutating func put(ascii text: StaticString) {
        put(UnsafeRawBufferPointer(start: text.utf8Start, count: text.utf8CodeUnitCount))
    }
}

extension Array: ByteSink where Element == UInt8 {
    public mutating func put(_ bytes: UnsafeRawBufferPointer) { append(contentsOf: bytes) }
}

/// One step of UTF-8 decoding at `i` by Unicode's "maximal subpart" rule, the one
/// `String(decoding:as:)` follows: a well-formed sequence gives its scalar and length;
/// an ill-formed one gives no scalar and the length that one U+FFFD replaces.
struct UTF8Step {
    let length: Int
    let scalar: UInt32?

    @inline(__always)
    init(_ p: UnsafePointer<UInt8>, _ i: Int, _ end: Int) {
        let b0 = p[i]
        if b0 < 0x80 { length = 1; scalar = UInt32(b0); return }
        let need: Int
        var low: UInt8 = 0x80, high: UInt8 = 0xBF
        var value: UInt32
        switch b0 {
        case 0xC2...0xDF: need = 1; value = UInt32(b0 & 0x1F)
        case 0xE0: need = 2; low = 0xA0; value = UInt32(b0 & 0x0F)
        case 0xE1...0xEC, 0xEE...0xEF: need = 2; value = UInt32(b0 & 0x0F)
        case 0xED: need = 2; high = 0x9F; value = UInt32(b0 & 0x0F)
        case 0xF0: need = 3; low = 0x90; value = UInt32(b0 & 0x07)
        case 0xF1...0xF3: need = 3; value = UInt32(b0 & 0x07)
        case 0xF4: need = 3; high = 0x8F; value = UInt32(b0 & 0x07)
        default: length = 1; scalar = nil; return
        }
        var k = 1
        while k <= need {
            guard i + k < end else { length = k; scalar = nil; return }
            let b = p[i + k]
            guard b >= low && b <= high else { length = k; scalar = nil; return }
            value = value << 6 | UInt32(b & 0x3F)
            (low, high) = (0x80, 0xBF)
            k += 1
        }
        length = need + 1
        scalar = value
    }
}
