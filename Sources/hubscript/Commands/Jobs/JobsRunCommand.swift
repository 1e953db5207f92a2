import Foundation

/// `hubscript jobs run JOB`: a fire by hand, now.
struct JobsRunCommand: Command {
    static let configuration = CommandConfiguration(
        name: "jobs run", abstract: "Fire a job now, by hand (run id JOB@manual-<now, RFC 3339 UTC>-<random>).",
        usage: "JOB [--now TIME]",
        options: [JobsCommands.nowOption] + CommonOptions.specs,
        discussion: """
        The fire is recorded in the job's history like a scheduled one but does not count
        as one: the schedule's next fire still comes. Each fire by hand has its own run id
        (the time to the millisecond and a random suffix): two in the same second are two fires. The job's overlap applies: while
        another fire of the job runs, it is skipped (exit 2) or waits (queue).
        Exit codes: the recipe's (0 success, 1 failed, 3 capability denied, 4 a limit);
        2 a configuration error or the fire was skipped.
        """)

    let options: JobsOptions
    let name: String

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one JOB (hubscript jobs list shows them)") }
        name = arguments.positionals[0]
        options = try JobsOptions(arguments)
    }

    func run() throws -> Int32 {
        let (config, scheduler, signals) = try options.scheduler()
        let job = try config.jobs.job(named: name)
        let record = try scheduler.fire(scheduler.manualFire(job))
        withExtendedLifetime(signals) {}
        guard let record, record.status != .skipped else { return ExitCode.usage }
        return Int32(record.exitCode ?? Int(ExitCode.usage))
    }
}
