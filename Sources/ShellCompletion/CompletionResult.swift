/// What to offer for the word being completed: candidates, and whether the shell adds
/// files of its own.
public struct CompletionResult: Sendable, Equatable {
    /// Which files the shell adds to the candidates.
    public enum Files: String, Sendable {
        case none, all, lua, directories
    }

    /// Whole words that start with the word being completed, in the order to show them.
    public var candidates: [String]
    public var files: Files

    public init(candidates: [String], files: Files = .none) {
        self.candidates = candidates
        self.files = files
    }

    /// The text `hubscript __complete` prints: the file directive (`:none`, `:all`,
    /// `:lua`, `:directories`) on the first line, then one candidate a line. A candidate
    /// holding a line break or a NUL is left out: a shell could not take it as one word.
    public var text: String {
        ([":" + files.rawValue] + candidates.filter { !$0.contains("\n") && !$0.contains("\r") && !$0.contains("\0") })
            .joined(separator: "\n") + "\n"
    }
}
