import Foundation
import HubBindings
import ScriptHost

/// Prints how a run ended: a message on stderr for people, a `summary` event with
/// `--json`. Returns the exit code.
struct RunReporter: Sendable {
    let output: ConsoleOutput
    let json: Bool

    func reportSetupFailure(_ error: Error, exitCode: Int32? = nil) -> Int32 {
        let failure = (error as? ScriptFailure) ?? ScriptFailure(kind: .load, message: "\(error)")
        let code = exitCode ?? failure.exitCode
        report(failure: failure)
        if json { output.event("summary", ["status": "failed", "exit_code": .integer(Int64(code))]) }
        output.flush()
        return code
    }

    /// Reports a run against a Hub: the error if any, warnings, and the closing summary
    /// (stderr for people; a `summary` event with --json).
    func finish(_ outcome: HubRunOutcome) -> Int32 {
        if let failure = outcome.failure { report(failure: failure) }
        for warning in outcome.warnings {
            if json { output.event("warning", ["message": .string(warning)]) } else { output.writeStderr("warning: \(warning)\n") }
        }
        let c = outcome.counts
        let seconds = outcome.report?.durationSeconds ?? 0
        let status = outcome.failure == nil ? "ok" : "failed"
        if json {
            output.event("summary", [
                "status": .string(status), "exit_code": .integer(Int64(outcome.exitCode)), "run_id": .string(outcome.runID),
                "reads": .integer(Int64(c.reads)), "writes": .integer(Int64(c.writes)), "replayed": .integer(Int64(c.replayed)),
                "planned": .integer(Int64(c.planned)), "failed": .integer(Int64(c.failed)),
                "duration_ms": .integer(Int64(seconds * 1000)),
                "memory_peak_bytes": .integer(Int64(outcome.report?.memoryPeakBytes ?? 0)),
                "exports": .array(outcome.exports.map { .object(["name": .string($0.name), "rows": .integer(Int64($0.rows)), "path": .string($0.path)]) }),
                "output_folder": .string(outcome.outputFolder.path),
            ])
        } else if c.reads + c.writes + c.replayed + c.planned + c.failed > 0 || !outcome.exports.isEmpty {
            // People get the summary when the run touched the Hub or exported something.
            if !outcome.exports.isEmpty {
                let files = outcome.exports.map { "\($0.name) (\($0.rows) rows)" }.joined(separator: ", ")
                output.writeStderr("exported \(files) to \(outcome.outputFolder.path)\n")
            }
            var parts = ["\(c.reads) reads", "\(c.writes) writes"]
            if c.replayed > 0 { parts.append("\(c.replayed) replayed") }
            if c.planned > 0 { parts.append("\(c.planned) planned") }
            if c.failed > 0 { parts.append("\(c.failed) failed") }
            output.writeStderr("\(status == "ok" ? "done" : "stopped"): run \(outcome.runID) — \(parts.joined(separator: ", ")) in \(String(format: "%.2f", seconds)) s\n")
        }
        output.flush()
        return outcome.exitCode
    }

    func finish(_ report: RunReport) -> Int32 {
        if let failure = report.failure { self.report(failure: failure) }
        if json {
            output.event("summary", [
                "status": .string(report.succeeded ? "ok" : "failed"),
                "exit_code": .integer(Int64(report.exitCode)),
                "duration_ms": .integer(Int64(report.durationSeconds * 1000)),
                "memory_peak_bytes": .integer(Int64(report.memoryPeakBytes)),
            ])
        }
        output.flush()
        return report.exitCode
    }

    func report(failure: ScriptFailure) {
        if json {
            var fields: [String: ScriptValue] = ["kind": .string(Self.kindName(failure.kind)), "message": .string(failure.message)]
            if let structured = failure.structured { fields["error"] = structured }
            if !failure.traceback.isEmpty { fields["traceback"] = .string(failure.traceback) }
            output.event("error", fields)
            return
        }
        var text = "error: \(failure.message)\n"
        if !failure.traceback.isEmpty { text += failure.traceback + "\n" }
        output.writeStderr(text)
    }

    static func kindName(_ kind: ScriptFailure.Kind) -> String {
        switch kind {
        case .load: "load"
        case .runtime: "runtime"
        case .host: "host"
        case .limit(let l): "limit.\(l.rawValue)"
        }
    }
}
