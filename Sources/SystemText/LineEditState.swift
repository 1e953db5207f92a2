// The keys and the state of a one-line editor (hubscript repl's prompt).

/// A key as the editor sees it.
public enum LineEditKey: Equatable, Sendable {
    case character(Character)
    case enter, backspace, delete, tab, left, right, home, end, up, down
    case ctrlC, ctrlD, killToEnd, killToStart, killWord, clearScreen
    case other

    public static func control(_ byte: UInt8) -> LineEditKey {
        switch byte {
        case 13, 10: return .enter
        case 127, 8: return .backspace
        case 9: return .tab
        case 1: return .home
        case 5: return .end
        case 2: return .left
        case 6: return .right
        case 16: return .up
        case 14: return .down
        case 3: return .ctrlC
        case 4: return .ctrlD
        case 11: return .killToEnd
        case 21: return .killToStart
        case 23: return .killWord
        case 12: return .clearScreen
        case 0x20..<0x7F: return .character(Character(Unicode.Scalar(byte)))
        default: return .other
        }
    }

    /// The key of `ESC [ sequence` or `ESC O sequence`.
    public static func escape(_ sequence: String) -> LineEditKey {
        switch sequence {
        case "A": return .up
        case "B": return .down
        case "C": return .right
        case "D": return .left
        case "H", "1~", "7~": return .home
        case "F", "4~", "8~": return .end
        case "3~": return .delete
        default: return .other
        }
    }
}

/// What the editor does after a key.
public enum LineEditAction: Equatable, Sendable {
    case redraw, bell, clearScreen, cancel, endOfInput, accept
    case list([String])
}

/// The line being edited: its characters, the cursor, and where it is in the history.
/// Pure: the terminal side (hubscript's `LineEditor`) reads the keys and draws.
public struct LineEditState: Sendable {
    public private(set) var buffer: [Character] = []
    public private(set) var cursor = 0
    public let history: [String]
    /// The history entry shown (history.count: the line being typed).
    private var historyIndex: Int
    /// The line being typed, kept while the history is browsed.
    private var typed: [Character] = []

    /// The longest line the editor holds, as a terminal's own line discipline (4096
    /// bytes): past it a key rings the bell. Each key redraws the line, so an unbounded
    /// paste would cost the square of its length in output.
    public static let maxCharacters = 4096

    public init(history: [String]) {
        self.history = history
        historyIndex = history.count
    }

    public mutating func handle(_ key: LineEditKey, completion: NameCompletion) -> LineEditAction {
        switch key {
        case .character(let c):
            guard buffer.count < Self.maxCharacters else { return .bell }
            buffer.insert(c, at: cursor)
            cursor += 1
        case .enter: return .accept
        case .backspace:
            guard cursor > 0 else { return .bell }
            buffer.remove(at: cursor - 1)
            cursor -= 1
        case .delete:
            guard cursor < buffer.count else { return .bell }
            buffer.remove(at: cursor)
        case .ctrlD:
            if buffer.isEmpty { return .endOfInput }
            guard cursor < buffer.count else { return .bell }
            buffer.remove(at: cursor)
        case .left: if cursor > 0 { cursor -= 1 } else { return .bell }
        case .right: if cursor < buffer.count { cursor += 1 } else { return .bell }
        case .home: cursor = 0
        case .end: cursor = buffer.count
        case .killToEnd: buffer.removeSubrange(cursor...)
        case .killToStart:
            buffer.removeSubrange(..<cursor)
            cursor = 0
        case .killWord:
            var start = cursor
            while start > 0 && buffer[start - 1] == " " { start -= 1 }
            while start > 0 && buffer[start - 1] != " " { start -= 1 }
            buffer.removeSubrange(start..<cursor)
            cursor = start
        case .up:
            guard historyIndex > 0 else { return .bell }
            if historyIndex == history.count { typed = buffer }
            historyIndex -= 1
            buffer = Array(history[historyIndex])
            cursor = buffer.count
        case .down:
            guard historyIndex < history.count else { return .bell }
            historyIndex += 1
            buffer = historyIndex == history.count ? typed : Array(history[historyIndex])
            cursor = buffer.count
        case .tab:
            let before = String(buffer[..<cursor])
            switch completion.complete(before) {
            case .none: return .bell
            case .insert(let text):
                guard buffer.count + text.count <= Self.maxCharacters else { return .bell }
                buffer.insert(contentsOf: text, at: cursor)
                cursor += text.count
            case .choices(let names): return .list(names)
            }
        case .ctrlC: return .cancel
        case .clearScreen: return .clearScreen
        case .other: return .bell
        }
        return .redraw
    }
}
