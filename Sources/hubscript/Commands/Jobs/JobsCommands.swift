import Foundation
import HubClient
import Scheduler
import ScriptHost
import RunJournal
import Configuration
import Automation
import Telemetry

/// `hubscript jobs …`: the scheduled jobs of the configuration file (docs/jobs.md).
enum JobsCommands {
    static let group = CommandGroup(
        name: "jobs", abstract: "List, fire and serve the scheduled jobs of the configuration.",
        subcommands: [HubscriptCLI.entry(JobsListCommand.self), HubscriptCLI.entry(JobsRunDueCommand.self),
                      HubscriptCLI.entry(JobsServeCommand.self), HubscriptCLI.entry(JobsRunCommand.self),
                      HubscriptCLI.entry(JobsHistoryCommand.self), HubscriptCLI.entry(JobsCheckCommand.self)])

    static let concurrencyOption = OptionSpec(
        name: "concurrency", valueName: "n",
        help: "Run at most this many fires at once (default \(JobScheduler.defaultConcurrency), at most \(maxConcurrency)); other due fires wait their turn.")

    /// The most `--concurrency` accepts.
    static let maxConcurrency = 256

    static let nowOption = OptionSpec(
        name: "now", valueName: "time",
        help: "Act as if the time were this RFC 3339 time (tests and replays); the clock runs on from it.")

    /// The scheduler's clock: the system's, or `--now` running on from when it was read.
    static func clock(_ arguments: ParsedArguments) throws -> @Sendable () -> Date {
        guard let text = arguments.value("now") else { return { Date() } }
        guard let start = parseTime(text) else {
            throw UsageError("--now takes an RFC 3339 time such as 2026-03-08T07:00:00Z, got '\(text)'")
        }
        let offset = start.timeIntervalSince(Date())
        return { Date().addingTimeInterval(offset) }
    }

    /// An RFC 3339 time (`Z` or an offset; fractional seconds allowed).
    static func parseTime(_ text: String) -> Date? {
        let plain = ISO8601DateFormatter()
        let fractional = ISO8601DateFormatter()
        fractional.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return plain.date(from: text) ?? fractional.date(from: text)
    }

    /// The command's configuration (read at its entry); one without jobs is refused
    /// when `required`.
    static func load(_ common: CommonOptions.Values, required: Bool = true) throws -> LoadedConfiguration {
        let config = common.configuration
        if required && config.jobs.jobs.isEmpty {
            let source = config.jobs.source.map { "\($0.path) defines no jobs" } ?? "no configuration file was found"
            throw HubConfigError("no jobs to run: \(source) (define them in its jobs = { … } table; see docs/jobs.md)")
        }
        return config
    }

    /// A scheduler over the state directory's journal that runs recipes and prints one
    /// line per fire on stdout.
    /// With `telemetry`, each fire and its run are counted for `/metrics`. `check`: how
    /// the journal is checked as it opens (`jobs serve` checks it unless it was closed
    /// cleanly, so that it can close it cleanly too).
    static func scheduler(_ config: LoadedConfiguration, _ common: CommonOptions.Values,
                          clock: @escaping @Sendable () -> Date, telemetry: ServeTelemetry? = nil,
                          check: Journal.IntegrityCheck = .skip) throws -> JobScheduler {
        let journal = try common.openJournal(check: check)
        var executor = RecipeFireExecutor(common: common, journal: journal)
        executor.telemetry = telemetry
        let scheduler = JobScheduler(jobs: config.jobs, journal: journal, state: common.state,
                                     executor: executor,
                                     notifier: DispatchFailureNotifier(common: common),
                                     clock: clock)
        let jobs = config.jobs
        scheduler.onRecord = { record in
            Console.out(FireText.line(record))
            telemetry?.recordFire(record, jobs: jobs)
        }
        return scheduler
    }

    /// Sets `scheduler.stop` on SIGTERM and SIGINT (running fires finish). Keep the
    /// sources alive while they matter.
    static func stopOnSignals(_ scheduler: JobScheduler, _ onStop: @escaping @Sendable () -> Void = {}) -> [DispatchSourceSignal] {
        [SIGINT, SIGTERM].map { signo in
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler {
                if !scheduler.stop.isSet { onStop() }
                scheduler.stop.fire()
            }
            source.resume()
            return source
        }
    }
}

/// What the jobs commands read from their arguments: the common options and the
/// scheduler's clock (`--now`).
struct JobsOptions {
    let common: CommonOptions.Values
    let clock: @Sendable () -> Date
    /// `--concurrency` (nil: the scheduler's default).
    let concurrency: Int?

    init(_ arguments: ParsedArguments) throws {
        common = try CommonOptions.Values(arguments)
        clock = try JobsCommands.clock(arguments)
        if let text = arguments.value("concurrency") {
            guard let n = Int(text), (1...JobsCommands.maxConcurrency).contains(n) else {
                throw UsageError("--concurrency takes a whole number from 1 to \(JobsCommands.maxConcurrency), got '\(text)'")
            }
            concurrency = n
        } else {
            concurrency = nil
        }
    }

    /// The configuration (refused without jobs), a scheduler over its jobs, and the
    /// signal sources that stop it (keep them alive while it runs).
    func scheduler(telemetry: ServeTelemetry? = nil, check: Journal.IntegrityCheck = .skip,
                   onStop: @escaping @Sendable () -> Void = {}) throws
        -> (config: LoadedConfiguration, scheduler: JobScheduler, signals: [DispatchSourceSignal]) {
        let config = try JobsCommands.load(common)
        let scheduler = try JobsCommands.scheduler(config, common, clock: clock, telemetry: telemetry, check: check)
        if let concurrency { scheduler.concurrency = concurrency }
        return (config, scheduler, JobsCommands.stopOnSignals(scheduler, onStop))
    }
}

/// How fires read for people and in `--json`.
enum FireText {
    /// One line: `RUN_ID STATUS …`, e.g. `nightly@2026-01-01T10:00:00Z succeeded in 0.42 s`.
    static func line(_ r: FireRecord) -> String {
        let f = TerminalText.line
        let id = TerminalText.field(r.runID)
        let reason = r.reason.map(f)
        switch r.status {
        case .succeeded:
            return "\(id) succeeded in \(duration(r.durationMs))\(reason.map { " (\($0))" } ?? "")\n"
        case .failed:
            let notified = r.notified.map { "; on_failure: \(f($0))" } ?? ""
            return "\(id) failed (exit \(r.exitCode ?? 1)) in \(duration(r.durationMs)): \(reason ?? "")\(notified)\n"
        case .skipped, .missed:
            return "\(id) \(r.status.rawValue): \(reason ?? "")\n"
        case .queued, .fired:
            return "\(id) \(r.status.rawValue)\(reason.map { ": \($0)" } ?? "")\n"
        }
    }

    /// `0.42 s`, or `—` when unknown.
    static func duration(_ ms: Int?) -> String {
        guard let ms else { return "—" }
        return String(format: "%.2f s", Double(ms) / 1000)
    }

    /// RFC 3339 UTC, or `—`.
    static func time(_ date: Date?) -> String { date.map(FireID.timestamp) ?? "—" }

    /// `date` on `zone`'s clock, RFC 3339 with its offset (`2026-01-02T02:30:00+01:00`).
    static func local(_ date: Date, _ zone: TimeZone) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = zone
        return formatter.string(from: date)
    }

    /// What `jobs list` shows for the latest record: running and interrupted fires are
    /// told apart by their lock.
    static func outcome(_ r: FireRecord, locks: any RunLocks) -> String {
        switch r.status {
        case .failed: return "failed (exit \(r.exitCode ?? 1))"
        case .queued, .fired: return locks.isHeld(r.runID) ? (r.status == .queued ? "queued" : "running") : "interrupted"
        default: return r.status.rawValue
        }
    }

    /// A fire as a `--json` object (type `fire`).
    static func json(_ r: FireRecord) -> [String: ScriptValue] {
        func time(_ d: Date?) -> ScriptValue { d.map { .string(FireID.timestamp($0)) } ?? .null }
        func int(_ i: Int?) -> ScriptValue { i.map { .integer(Int64($0)) } ?? .null }
        return [
            "job": .string(r.job), "run_id": .string(r.runID), "scheduled_at": time(r.scheduledAt),
            "missed_through": time(r.missedThrough), "trigger": .string(r.trigger.rawValue),
            "status": .string(r.status.rawValue), "reason": r.reason.map(ScriptValue.string) ?? .null,
            "started_at": time(r.startedAt), "finished_at": time(r.finishedAt), "duration_ms": int(r.durationMs),
            "exit_code": int(r.exitCode), "notified": r.notified.map(ScriptValue.string) ?? .null,
        ]
    }

    /// Rows padded to their columns' widths, two spaces apart, with no trailing spaces.
    static func table(_ rows: [[String]]) -> String {
        guard let columns = rows.map(\.count).max() else { return "" }
        let widths = (0..<columns).map { c in rows.map { c < $0.count ? $0[c].count : 0 }.max() ?? 0 }
        return rows.map { row in
            row.enumerated().map { c, cell in
                c == row.count - 1 ? cell : cell.padding(toLength: widths[c], withPad: " ", startingAt: 0)
            }.joined(separator: "  ").replacingOccurrences(of: " +$", with: "", options: .regularExpression) + "\n"
        }.joined()
    }
}
