import Foundation
import HubClient
import RunJournal
import Configuration

/// Applies a retention rule to a journal: the one place `runs prune` and the serving
/// commands' daily prune build what `Journal.prune` is given.
struct RetentionRunner {
    let journal: Journal
    let state: StateDirectory

    /// The rule for runs older than `olderThan`, unfinished runs kept until `keepFailed`
    /// (nil: kept), as of `now`.
    static func rule(olderThan: RetentionAge, keepFailed: RetentionAge?, now: Date = Date()) -> PruneRule {
        PruneRule(before: olderThan.before(now), unfinishedBefore: keepFailed?.before(now))
    }

    /// Prunes what `rule` selects, keeping what `RetentionKeep` always keeps; export
    /// folders are removed only under the state directory's `runs/`.
    func prune(_ rule: PruneRule, dryRun: Bool, batchRows: Int = 1000) throws -> PruneReport {
        let keep = RetentionKeep(locks: journal.runLocks(state: state), unfinishedBefore: rule.unfinishedBefore)
        return try journal.prune(rule, keep: keep, exportsRoot: try state.folderPath("runs"), batchRows: batchRows, dryRun: dryRun)
    }
}

/// The daily prune of a serving command (`jobs serve`, `listen`, `console`) with a
/// `retention` setting: once at start if the journal's last prune is a day old or more
/// (or it has none), then every day. A failed prune is reported on stderr and tried
/// again at the next hourly check; it never stops the command.
final class DailyRetention: @unchecked Sendable {
    static let interval: TimeInterval = 86_400
    static let checkEvery: TimeInterval = 3600
    private let runner: RetentionRunner
    private let config: RetentionConfig
    private let name: String
    private let timer: DispatchSourceTimer

    /// Starts the checks for `configuration`'s retention; nil when it has none.
    static func start(_ configuration: LoadedConfiguration, journal: Journal, state: StateDirectory,
                      name: String) -> DailyRetention? {
        guard let config = configuration.retention else { return nil }
        return DailyRetention(runner: RetentionRunner(journal: journal, state: state), config: config, name: name)
    }

    private init(runner: RetentionRunner, config: RetentionConfig, name: String) {
        self.runner = runner
        self.config = config
        self.name = name
        timer = DispatchSource.makeTimerSource(queue: DispatchQueue(label: "hubscript.retention", qos: .utility))
        timer.setEventHandler { [weak self] in self?.pruneIfDue() }
        timer.schedule(deadline: .now(), repeating: Self.checkEvery)
        timer.resume()
    }

    deinit { timer.cancel() }

    /// Prunes when the last prune is `interval` old or more; returns the report if it did.
    @discardableResult
    func pruneIfDue(now: Date = Date()) -> PruneReport? {
        do {
            if let last = try runner.journal.lastPruneAt(), now.timeIntervalSince(last) < Self.interval { return nil }
            let rule = RetentionRunner.rule(olderThan: config.olderThan, keepFailed: config.keepFailed, now: now)
            let report = try runner.prune(rule, dryRun: false)
            Console.err("\(name): retention (older_than \(config.olderThan)) pruned \(report.runs) runs, \(report.writes) writes, \(report.exportFolders) export folders\n")
            return report
        } catch {
            Console.err("\(name): the daily prune failed, and is tried again within the hour: \(error)\n")
            return nil
        }
    }
}
