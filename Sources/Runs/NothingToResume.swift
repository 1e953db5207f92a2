import Foundation
import SystemText
import RunJournal

/// A resume of a run that already succeeded: nothing to do, nothing is run or rewritten
/// (exit code 0).
public struct NothingToResume: Error, Sendable, CustomStringConvertible {
    public let run: RunRecord
    public var description: String {
        var text = "run \(run.id) succeeded\(run.finishedAt.map { " (finished \(UTCTime.iso8601($0)))" } ?? ""); there is nothing to resume, and nothing was run"
        if let folder = run.outputFolder { text += "; its exports are unchanged in \(folder)" }
        return text + ". To run the recipe again, start a new run (without --run-id)."
    }
}
