import Foundation

/// The stderr line a run starts with (`run ID started; if it stops, resume it with:
/// hubscript runs resume ID [--config FILE] [--state-dir DIR]`, or `plan ID started`),
/// for tests about other output.
enum RunStartLine {
    static let pattern = try! NSRegularExpression(
        pattern: #"(?m)^(?:run (\S+) started(?: \(attempt \d+\))?; if it stops, resume it with: hubscript runs resume \1(?: --(?:config|state-dir) (?:'[^']*'|\S+))*|plan \S+ started)\n"#)

    /// `stderr` without its run start lines.
    static func removing(from stderr: String) -> String {
        pattern.stringByReplacingMatches(in: stderr, range: NSRange(stderr.startIndex..., in: stderr), withTemplate: "")
    }
}
