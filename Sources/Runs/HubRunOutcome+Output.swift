import Foundation
import SystemText
import ScriptHost
import RunJournal

extension HubRunOutcome {
    /// The lines an attempt's kept output closes with (`JournalledOutput.close`), as the
    /// console reports the run: the error with its location and traceback, each warning,
    /// then the summary — status, exit code, this attempt's counts, duration, exports.
    /// The text is the plain text (a reader escapes it for its terminal or page).
    public var closingOutput: [(kind: RunOutputKind, text: String)] {
        var lines: [(kind: RunOutputKind, text: String)] = []
        if let failure {
            var text = "error: " + (failure.location.map { "\($0): " } ?? "") + failure.message
            if !failure.traceback.isEmpty { text += "\n" + failure.traceback }
            lines.append((.error, text))
        }
        for warning in warnings { lines.append((.warning, "warning: " + warning)) }
        lines.append((.summary, summaryText))
        return lines
    }

    /// `succeeded (exit 0): 3 reads, 2 writes, 1 replayed in 0.42 s; exported a.csv (3 rows) to /folder`.
    var summaryText: String {
        let status = switch failure?.kind {
        case nil: "succeeded"
        case .limit?: "stopped"
        default: "failed"
        }
        let c = counts
        var parts = ["\(c.reads) reads", "\(c.writes) writes"]
        if c.readsReplayed > 0 { parts.insert("\(c.readsReplayed) reads replayed", at: 1) }
        if c.replayed > 0 { parts.append("\(c.replayed) replayed") }
        if c.planned > 0 { parts.append("\(c.planned) planned") }
        if c.failed > 0 { parts.append("\(c.failed) failed") }
        var text = "\(status) (exit \(exitCode)): run \(runID) — \(parts.joined(separator: ", "))"
        text += " in \(DecimalText.fixed(report?.durationSeconds ?? 0, 2)) s"
        let files = exports.filter { !$0.inVault }
        let stored = exports.filter(\.inVault)
        if !files.isEmpty {
            let list = files.map { "\($0.name)\($0.incomplete ? " (incomplete)" : "") (\($0.rows) rows)" }
            text += "; exported \(list.joined(separator: ", ")) to \(outputFolder.path)"
        }
        if !stored.isEmpty {
            let list = stored.map { "\($0.name) (\($0.objectID ?? "not stored: plan")) (\($0.rows) rows)" }
            text += "; exported \(list.joined(separator: ", ")) to the vault"
        }
        return text
    }
}
