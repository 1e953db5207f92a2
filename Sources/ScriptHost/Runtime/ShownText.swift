/// How much recipe-made text is shown to people in one log line or error message.
/// Showing text (escaped for a terminal, or as JSON) costs several times its size, and
/// a line of megabytes helps nobody: longer text is cut, saying so.
public enum ShownText {
    public static let maxBytes = 64 << 10

    /// `text` cut to `maxBytes` of UTF-8 at a character boundary, with how much it was.
    public static func cut(_ text: String, max: Int = maxBytes) -> String {
        let count = text.utf8.count
        guard count > max else { return text }
        var end = text.utf8.index(text.utf8.startIndex, offsetBy: max)
        while String.Index(end, within: text.unicodeScalars) == nil { end = text.utf8.index(before: end) }
        return String(text[..<end]) + " … (\(count) bytes; cut to \(max))"
    }
}
