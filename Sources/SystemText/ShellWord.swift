import Foundation

/// Text as one POSIX shell word, for commands hubscript prints for people to paste
/// (`hubscript runs resume 'ID' --config '/path'`).
public enum ShellWord {
    /// `text` as is when it holds only characters no shell treats specially, else in
    /// single quotes (a single quote inside becomes `'\''`).
    public static func quoted(_ text: String) -> String {
        let safe = text.unicodeScalars.allSatisfy {
            CharacterSet.alphanumerics.contains($0) && $0.isASCII || "@%+=:,./-_".unicodeScalars.contains($0)
        }
        if safe && !text.isEmpty { return text }
        return "'" + text.replacingOccurrences(of: "'", with: "'\\''") + "'"
    }
}
