import Foundation

/// The stderr line a run starts with (`run ID started; if it stops, resume it with:
/// hubscript runs resume ID [--config FILE] [--state-dir DIR]`; `run ID started` for a session, which cannot be resumed;
/// or `plan ID started`), and the closing line of a run that
/// made no Hub call (`done: run ID — 0 reads, 0 writes in 0.01 s`, whose time varies),
/// for tests about other output. `RunSummaryLineCLITests` checks the closing line itself.
enum RunStartLine {
    static let pattern = try! NSRegularExpression(
        pattern: #"(?m)^(?:run (\S+) started(?: \(attempt \d+\))?(?:; if it stops, resume it with: hubscript runs resume \1(?: --(?:config|state-dir) (?:'[^']*'|\S+))*)?|plan \S+ started)\n"#)
    static let quietClose = try! NSRegularExpression(
        pattern: #"(?m)^(?:done|stopped): run \S+ — 0 reads, 0 writes in \d+\.\d\d s\n"#)

    /// `stderr` without its run start lines and the closing line of a run without Hub calls.
    static func removing(from stderr: String) -> String {
        let started = pattern.stringByReplacingMatches(in: stderr, range: NSRange(stderr.startIndex..., in: stderr), withTemplate: "")
        return quietClose.stringByReplacingMatches(in: started, range: NSRange(started.startIndex..., in: started), withTemplate: "")
    }
}
