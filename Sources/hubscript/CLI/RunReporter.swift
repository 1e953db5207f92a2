import Foundation
import ScriptHost

/// Prints how a run ended: a message on stderr for people, a `summary` event with
/// `--json`. Returns the exit code.
struct RunReporter: Sendable {
    let output: ConsoleOutput
    let json: Bool

    func reportSetupFailure(_ error: Error) -> Int32 {
        let failure = (error as? ScriptFailure) ?? ScriptFailure(kind: .load, message: "\(error)")
        report(failure: failure)
        if json { output.event("summary", ["status": "failed", "exit_code": .integer(Int64(failure.exitCode))]) }
        output.flush()
        return failure.exitCode
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
