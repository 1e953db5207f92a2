import Foundation
import Scheduler
import ScriptHost

/// `hubscript jobs list`: each job's schedule, zone, next fire and last fire.
struct JobsListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "jobs list", abstract: "List the jobs: schedule, time zone, next fire, last fire and its outcome.",
        usage: "[--json] [--now TIME]",
        options: [
            OptionSpec(name: "json", valueName: nil, help: "One JSON object a job (type \"job\") on stdout."),
            JobsCommands.nowOption,
        ] + CommonOptions.specs,
        discussion: """
        Times are shown on each job's own clock, RFC 3339 with the zone's offset. A fire
        whose process died is shown as interrupted: the next jobs run-due or jobs serve
        resumes it. 'hubscript jobs check' checks every job's recipe, params, profile and
        allow before they fire.
        """)

    let options: JobsOptions
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("jobs list takes no arguments") }
        options = try JobsOptions(arguments)
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        let (common, clock) = (options.common, options.clock)
        let config = try JobsCommands.load(common, required: false)
        let jobs = config.jobs.jobs
        if jobs.isEmpty {
            let source = config.jobs.source.map { "\($0.path) defines no jobs" } ?? "no configuration file was found"
            Console.out("no jobs: \(source)\n")
            return ExitCode.success
        }
        let journal = try common.openJournal()
        let now = clock()
        var rows = [["JOB", "SCHEDULE", "ZONE", "NEXT FIRE", "LAST FIRE", "OUTCOME"]]
        let output = ConsoleOutput(json: true, timestamps: true)
        for job in jobs {
            let schedule = job.definition.schedule
            let next = schedule.nextFire(after: now)
            let last = try journal.fires(job: job.name, limit: 1).first
            if json {
                output.event("job", [
                    "name": .string(job.name), "recipe": .string(job.shownRecipe), "schedule": .string(schedule.expression),
                    "timezone": .string(schedule.timeZoneName), "profile": job.definition.profile.map(ScriptValue.string) ?? .null,
                    "overlap": .string(job.definition.overlap.rawValue), "catch_up": .string(job.definition.catchUp.description),
                    "next_fire": next.map { .string(FireText.local($0, schedule.timeZone)) } ?? .null,
                    "next_run_id": next.map { .string(FireID.runID(job: job.name, scheduled: $0)) } ?? .null,
                    "last_fire": last.map { .object(FireText.json($0)) } ?? .null,
                ])
                continue
            }
            rows.append([
                job.name, schedule.expression, schedule.timeZoneName,
                next.map { FireText.local($0, schedule.timeZone) } ?? "never",
                last.map { FireText.local($0.missedThrough ?? $0.scheduledAt, schedule.timeZone) } ?? "—",
                last.map { FireText.outcome($0, locks: journal.runLocks(state: common.state)) } ?? "—",
            ])
        }
        if !json { Console.out(FireText.table(rows.map { $0.map(TerminalText.field) })) }
        return ExitCode.success
    }
}
