import Foundation
import ScriptHost
import SystemText

/// A small line editor over termios for `hubscript repl` on a terminal: raw mode while a
/// line is read (restored before the line is run), left/right, Home/End, backspace and
/// delete, Ctrl-A/E/K/U/W/L, history with up/down (kept in a file, 0600), Tab
/// completion. Ctrl-C drops the line; Ctrl-D on an empty line ends the input. Long lines
/// that wrap the terminal are redrawn on one row (the editor does not track wrapping).
struct LineEditor: Sendable {
    var history: [String]
    let historyFile: String?
    let completion: NameCompletion
    let inputFD: Int32
    let outputFD: Int32
    /// A byte read past the end of a malformed UTF-8 character, to be read again.
    private var pushedBack: UInt8?

    /// The most lines the history file keeps.
    static let historyLimit = 1000

    init(historyFile: String?, completion: NameCompletion, inputFD: Int32 = 0, outputFD: Int32 = 1) {
        self.historyFile = historyFile
        self.completion = completion
        self.inputFD = inputFD
        self.outputFD = outputFD
        history = historyFile.map(ReplHistoryFile.load) ?? []
    }

    /// Reads one line, or nil at Ctrl-D on an empty line (or if the terminal closed).
    /// Tab completes `completion`'s names and `sessionNames` (what the session has set).
    mutating func readLine(prompt: String, sessionNames: [String] = []) -> String? {
        let completion = sessionNames.isEmpty ? self.completion : NameCompletion(names: self.completion.names + sessionNames)
        var saved = termios()
        guard tcgetattr(inputFD, &saved) == 0 else { return plainLine(prompt: prompt) }
        var raw = saved
        raw.c_iflag &= ~tcflag_t(BRKINT | ICRNL | INPCK | ISTRIP | IXON)
        raw.c_lflag &= ~tcflag_t(ECHO | ICANON | IEXTEN | ISIG)
        raw.c_cflag |= tcflag_t(CS8)
        withUnsafeMutableBytes(of: &raw.c_cc) { cc in
            cc[Int(VMIN)] = 1
            cc[Int(VTIME)] = 0
        }
        TerminalRestore.begin(inputFD, mode: saved)
        guard tcsetattr(inputFD, TCSADRAIN, &raw) == 0 else { TerminalRestore.end(); return plainLine(prompt: prompt) }
        defer {
            var restore = saved
            _ = tcsetattr(inputFD, TCSADRAIN, &restore)
            TerminalRestore.end()
        }
        var state = LineEditState(history: history)
        emit("\r" + prompt)
        while true {
            guard let key = readKey() else { emit("\r\n"); return nil }
            switch state.handle(key, completion: completion) {
            case .redraw: redraw(prompt, state)
            case .list(let candidates):
                // A candidate may be a key of Hub data: shown escaped, like any value.
                emit("\r\n" + candidates.map(TerminalText.field).joined(separator: "  ") + "\r\n")
                redraw(prompt, state)
            case .bell: emit("\u{7}")
            case .clearScreen: emit("\u{1B}[H\u{1B}[2J"); redraw(prompt, state)
            case .cancel: emit("^C\r\n"); return ""
            case .endOfInput: emit("\r\n"); return nil
            case .accept:
                emit("\r\n")
                let line = String(state.buffer)
                remember(line)
                return line
            }
        }
    }

    /// Without termios (not a terminal after all): the line as typed.
    private func plainLine(prompt: String) -> String? {
        emit(prompt)
        return Swift.readLine(strippingNewline: true)
    }

    private mutating func remember(_ line: String) {
        guard !line.trimmingCharacters(in: .whitespaces).isEmpty, history.last != line else { return }
        history.append(line)
        if history.count > Self.historyLimit { history.removeFirst(history.count - Self.historyLimit) }
        if let historyFile { ReplHistoryFile.append(line, to: historyFile) }
    }

    /// The line as typed, its control characters escaped (a line recalled from the
    /// history file or pasted may hold them); the cursor placed after the escapes.
    private func redraw(_ prompt: String, _ state: LineEditState) {
        var text = "\r" + prompt + TerminalText.field(String(state.buffer)) + "\u{1B}[K\r"
        let column = prompt.count + TerminalText.field(String(state.buffer.prefix(state.cursor))).count
        if column > 0 { text += "\u{1B}[\(column)C" }
        emit(text)
    }

    private func emit(_ text: String) {
        var bytes = Array(text.utf8)
        var offset = 0
        while offset < bytes.count {
            let n = bytes[offset...].withUnsafeMutableBytes { write(outputFD, $0.baseAddress, $0.count) }
            if n <= 0 { if n < 0 && errno == EINTR { continue }; return }
            offset += n
        }
    }

    private mutating func readByte() -> UInt8? {
        if let byte = pushedBack {
            pushedBack = nil
            return byte
        }
        var byte: UInt8 = 0
        while true {
            let n = read(inputFD, &byte, 1)
            if n == 1 { return byte }
            if n < 0 && errno == EINTR { continue }
            return nil
        }
    }

    /// One key: a character (UTF-8 decoded), a control key or an escape sequence.
    private mutating func readKey() -> LineEditKey? {
        guard let first = readByte() else { return nil }
        switch first {
        case 0x1B:
            guard let second = readByte() else { return nil }
            guard second == UInt8(ascii: "[") || second == UInt8(ascii: "O") else { return .other }
            var sequence: [UInt8] = []
            while let b = readByte() {
                sequence.append(b)
                if (0x40...0x7E).contains(b) || sequence.count > 8 { break }
            }
            return LineEditKey.escape(String(decoding: sequence, as: UTF8.self))
        case 0x80...:
            // UTF-8: a lead byte, then its continuation bytes. Bytes that are not UTF-8
            // (a stray continuation byte, a lead byte followed by a plain one) ring the
            // bell; the plain byte that cut a character short is read again as a key,
            // so Enter after a malformed paste still ends the line.
            let length = (0xC2...0xDF).contains(first) ? 2 : (0xE0...0xEF).contains(first) ? 3 : (0xF0...0xF4).contains(first) ? 4 : 0
            guard length > 0 else { return .other }
            var bytes = [first]
            while bytes.count < length, let b = readByte() {
                guard (0x80...0xBF).contains(b) else {
                    pushedBack = b
                    return .other
                }
                bytes.append(b)
            }
            let text = String(decoding: bytes, as: UTF8.self)
            guard text.count == 1, let character = text.first, bytes.count == length else { return .other }
            return .character(character)
        default:
            return LineEditKey.control(first)
        }
    }
}

