/// Completion of dotted names (an interactive prompt's Tab): the word before the cursor
/// against a list of names. A dotted name completes one part at a time: `hub.` offers
/// `hub.users.`, `hub.sessions.`, …; `hub.users.` offers what `hub.users` holds.
public struct NameCompletion: Sendable {
    public enum Result: Equatable, Sendable {
        /// Nothing to complete.
        case none
        /// Text to insert at the cursor.
        case insert(String)
        /// Several names fit and share nothing more: show them (the part after the last dot).
        case choices([String])
    }

    public let names: [String]

    public init(names: [String]) { self.names = Array(Set(names)).sorted() }

    public func complete(_ textBeforeCursor: String) -> Result {
        let word = Self.word(before: textBeforeCursor)
        guard !word.isEmpty else { return .none }
        var seen = Set<String>()
        var candidates: [String] = []
        for name in names where name.hasPrefix(word) && name != word {
            let rest = name.dropFirst(word.count)
            let part = rest.firstIndex(of: ".").map { String(word + rest[...$0]) } ?? name
            if seen.insert(part).inserted { candidates.append(part) }
        }
        guard let first = candidates.first else { return .none }
        if candidates.count == 1 { return .insert(String(first.dropFirst(word.count))) }
        var common = first
        for candidate in candidates.dropFirst() {
            while !candidate.hasPrefix(common) { common.removeLast() }
        }
        if common.count > word.count { return .insert(String(common.dropFirst(word.count))) }
        let shownFrom = word.lastIndex(of: ".").map { word.distance(from: word.startIndex, to: $0) + 1 } ?? 0
        return .choices(candidates.map { String($0.dropFirst(shownFrom)) })
    }

    /// The name being typed: the letters, digits, `_` and `.` before the cursor, or the
    /// whole line when it is a command (it starts with `:` and has no space).
    public static func word(before text: String) -> String {
        if text.hasPrefix(":") && !text.contains(" ") { return text }
        var start = text.endIndex
        while start > text.startIndex {
            let previous = text.index(before: start)
            let c = text[previous]
            guard c == "_" || c == "." || (c.isASCII && (c.isLetter || c.isNumber)) else { break }
            start = previous
        }
        return String(text[start...])
    }
}
