import Foundation
import Synchronization

/// Lines from standard input as they come (a pipe, a file): no prompt, no editing,
/// so a script or a test can drive a session.
final class PlainLineInput: ReplInput {
    func readLine(prompt: String) -> String? {
        Swift.readLine(strippingNewline: true)
    }
}

/// The one chunk of `hubscript eval`, then the end of the input.
final class FixedInput: ReplInput {
    private let remaining: Mutex<[String]>

    init(_ lines: [String]) { remaining = Mutex(lines) }

    func readLine(prompt: String) -> String? {
        remaining.withLock { $0.isEmpty ? nil : $0.removeFirst() }
    }
}

/// The terminal's line editor, with the session's history file and completion.
final class EditedInput: ReplInput {
    private let editor: Mutex<LineEditor>

    init(_ editor: LineEditor) { self.editor = Mutex(editor) }

    func readLine(prompt: String) -> String? {
        editor.withLock { $0.readLine(prompt: prompt) }
    }
}
