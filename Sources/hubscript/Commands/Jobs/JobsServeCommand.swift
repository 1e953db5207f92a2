import Foundation
import Scheduler
import ScriptHost
import Configuration

/// `hubscript jobs serve`: the foreground scheduler, for systemd or a container.
struct JobsServeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "jobs serve", abstract: "Run the scheduler in the foreground: sleep until a job is due, fire it, repeat.",
        usage: "[--now TIME] [--concurrency N] [--listen PORT [--bind ADDRESS] [--max-connections N] [--max-connections-per-address N]]",
        options: [JobsCommands.nowOption, JobsCommands.concurrencyOption,
                  OptionSpec(name: "listen", valueName: "port", help: "Also receive Hub webhooks on this port and run the triggers (as hubscript listen)."),
                  ListenAddress.bindOption] + ServerLimitOptions.specs
            + CommonOptions.specs,
        discussion: """
        Fires as jobs run-due does, at each scheduled time; one line per fire on stdout.
        A fire that comes due while the job's previous fire still runs is skipped or
        queued (the job's overlap). At most --concurrency fires run at once (default 8).
        SIGTERM or Ctrl-C: no fire starts any more, running
        fires finish, then it exits 0. With --listen, it also runs the configuration's
        triggers as hubscript listen does (docs/webhooks.md).
        """)

    let options: JobsOptions
    let listenAddress: ListenAddress?

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("jobs serve takes no arguments") }
        options = try JobsOptions(arguments)
        let port = try SandboxServeCommand.port(arguments.value("listen"), "--listen")
        for option in ["bind", "max-connections", "max-connections-per-address"] where port == nil && arguments.value(option) != nil {
            throw UsageError("--\(option) needs --listen PORT (the webhook receiver's port)")
        }
        let limits = try ServerLimitOptions.limits(arguments)
        listenAddress = try port.map { try ListenAddress(bind: arguments.value("bind"), port: $0, limits: limits) }
    }

    func run() throws -> Int32 {
        let (config, scheduler, signals) = try options.scheduler(check: .unlessClosedCleanly) {
            Console.err("jobs serve: stopping; running fires finish first\n")
        }
        let clock = options.clock
        let names = config.jobs.jobs.map(\.name).joined(separator: ", ")
        let next = config.jobs.jobs.compactMap { job in
            job.definition.schedule.nextFire(after: clock()).map { (job.name, $0) }
        }.min { $0.1 < $1.1 }
        let nextText = next.map { "; next: \(FireID.runID(job: $0.0, scheduled: $0.1))" } ?? "; none will fire"
        let count = config.jobs.jobs.count
        Console.err("jobs serve: \(count) job\(count == 1 ? "" : "s") (\(TerminalText.field(names)))\(nextText)\n")
        let listening = try listenAddress.map { address in
            let (hub, triggers) = try TriggersConfig.load(explicit: options.common.config)
            return try Listening.start(hub: hub, triggers: triggers, common: options.common, address: address, name: "jobs serve",
                                       journal: scheduler.journal)
        }
        scheduler.serve(onError: { Console.err("jobs serve: \(TerminalText.text("\($0)"))\n") })
        listening?.stop()
        // Every fire has finished: the journal is closed here, before the process exits,
        // so the next command finds it closed cleanly and skips the integrity check.
        scheduler.journal.closeCleanly()
        withExtendedLifetime(signals) {}
        Console.err("jobs serve: stopped\n")
        return ExitCode.success
    }
}
