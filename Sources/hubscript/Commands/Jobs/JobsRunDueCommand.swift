import Foundation
import Synchronization

/// `hubscript jobs run-due`: one scheduler pass, for a crontab line every minute.
struct JobsRunDueCommand: Command {
    static let configuration = CommandConfiguration(
        name: "jobs run-due", abstract: "Fire each job that is due now, once per scheduled time (for a crontab line every minute).",
        usage: "[--now TIME] [--concurrency N]",
        options: [JobsCommands.nowOption, JobsCommands.concurrencyOption] + CommonOptions.specs,
        discussion: """
        A fire scheduled less than a minute ago runs; older ones were late, and each job's
        catch_up decides which of them run and which are recorded missed. A fire's run id
        is JOB@<scheduled time, RFC 3339 UTC>: two schedulers on one state directory run
        it once, the other records it skipped (already fired). A fire whose process died
        is resumed. Jobs run at once, each job's fires in order, at most --concurrency
        fires at a time (default 8). One line per fire on stdout; the recipes' output as
        in hubscript run.
        SIGTERM or Ctrl-C: running fires finish, no other starts.
        Exit codes: 0 every fire succeeded, was skipped or missed; 1 a fire failed;
        2 a configuration error (nothing fired).
        """)

    let options: JobsOptions

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("jobs run-due takes no arguments") }
        options = try JobsOptions(arguments)
    }

    func run() throws -> Int32 {
        let (_, scheduler, signals) = try options.scheduler()
        let failed = FailureFlag()
        let print = scheduler.onRecord
        scheduler.onRecord = { record in
            if record.status == .failed { failed.set() }
            print(record)
        }
        try scheduler.runDue(now: options.clock())
        withExtendedLifetime(signals) {}
        return failed.isSet ? ExitCode.recipeFailed : ExitCode.success
    }
}

/// Set by any thread when a fire fails.
final class FailureFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
