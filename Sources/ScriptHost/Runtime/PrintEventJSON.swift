import SystemText

/// The `--json` line of a printed Lua string, streamed: byte for byte what
/// `JSONCodec.encode(.object(["text": .string(String(decoding: bytes, as: UTF8.self)),
/// "type": "print"]))` gives, without building the String or the encoded copy (a
/// recipe may print tens of MiB at once).
enum PrintEventJSON {
    static func write<Sink: ByteSink>(_ bytes: UnsafeRawBufferPointer, timestamp: String? = nil, into sink: inout Sink) {
        sink.put(ascii: #"{"text":""#)
        putJSONStringBody(bytes, into: &sink)
        if let timestamp {
            sink.put(ascii: #"","ts":""#)
            var stamp = timestamp
            stamp.withUTF8 { sink.put(UnsafeRawBufferPointer($0)) }
        }
        sink.put(ascii: #"","type":"print"}"#)
    }


    /// The inside of a JSON string (no quotes), escaped as `JSONWriter.writeString` (JSONKit)
    /// escapes; ill-formed UTF-8 becomes U+FFFD as `String(decoding:as:)` makes it.
    static func putJSONStringBody<Sink: ByteSink>(_ bytes: UnsafeRawBufferPointer, into sink: inout Sink) {
        guard let base = bytes.baseAddress?.assumingMemoryBound(to: UInt8.self) else { return }
        let end = bytes.count
        var runStart = 0
        var i = 0
        func flushRun(_ sink: inout Sink) {
            sink.put(UnsafeRawBufferPointer(start: base + runStart, count: i - runStart))
        }
        while i < end {
            let b = base[i]
            if b >= 0x20 && b != UInt8(ascii: "\"") && b != UInt8(ascii: "\\") && b < 0x80 { i += 1; continue }
            if b < 0x80 {
                flushRun(&sink)
                switch b {
                case UInt8(ascii: "\""): sink.put(ascii: #"\""#)
                case UInt8(ascii: "\\"): sink.put(ascii: #"\\"#)
                case 0x0A: sink.put(ascii: #"\n"#)
                case 0x0D: sink.put(ascii: #"\r"#)
                case 0x09: sink.put(ascii: #"\t"#)
                default:
                    let text: [UInt8] = [UInt8(ascii: "\\"), UInt8(ascii: "u"), UInt8(ascii: "0"), UInt8(ascii: "0"),
                                         Hex.digit(b >> 4), Hex.digit(b)]
                    text.withUnsafeBytes { sink.put($0) }
                }
                i += 1
                runStart = i
                continue
            }
            let step = UTF8Step(base, i, end)
            if step.scalar != nil { i += step.length; continue }
            flushRun(&sink)
            sink.put(ascii: "\u{FFFD}")
            i += step.length
            runStart = i
        }
        flushRun(&sink)
    }
}
