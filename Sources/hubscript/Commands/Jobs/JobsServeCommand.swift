import Foundation
import Scheduler
import ScriptHost
import Configuration
import HTTPKit
import Automation
import Console

/// `hubscript jobs serve`: the foreground scheduler, for systemd or a container.
struct JobsServeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "jobs serve", abstract: "Run the scheduler in the foreground: sleep until a job is due, fire it, repeat.",
        usage: "[--now TIME] [--concurrency N] [--http [ADDRESS:]PORT] [--listen PORT [--bind ADDRESS] [--max-connections N] [--max-connections-per-address N]] [--console PORT]",
        options: [JobsCommands.nowOption, JobsCommands.concurrencyOption,
                  OptionSpec(name: "http", valueName: "address:port", help: "Serve GET /healthz, /readyz and /metrics on this port (127.0.0.1 unless an address is given; 0 picks a free port)."),
                  OptionSpec(name: "listen", valueName: "port", help: "Also receive Hub webhooks on this port and run the triggers (as hubscript listen)."),
                  ListenAddress.bindOption] + ServerLimitOptions.specs
            + [ConsoleServing.portOption] + CommonOptions.specs,
        discussion: """
        Fires as jobs run-due does, at each scheduled time; one line per fire on stdout.
        A fire that comes due while the job's previous fire still runs is skipped or
        queued (the job's overlap). At most --concurrency fires run at once (default 8).
        SIGTERM or Ctrl-C: no fire starts any more, running
        fires finish, then it exits 0. With --listen, it also runs the configuration's
        triggers as hubscript listen does (docs/webhooks.md).
        With --http (and on the --listen port), it answers GET /healthz (alive), /readyz (the
        journal answers and the scheduler runs; 503 with the reason otherwise) and /metrics
        (Prometheus text format): docs/operations.md, "Health and metrics".
        """)

    let options: JobsOptions
    let listenAddress: ListenAddress?
    /// `--http`: where the health and metrics endpoints are served on their own.
    let httpAddress: ListenAddress?
    /// `--console PORT`: the operator console beside the scheduler, on 127.0.0.1.
    let consolePort: UInt16?

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("jobs serve takes no arguments") }
        // The arguments first: a mistake in them is told before the configuration is read.
        let port = try SandboxServeCommand.port(arguments.value("listen"), "--listen")
        for option in ["bind", "max-connections", "max-connections-per-address"] where port == nil && arguments.value(option) != nil {
            throw UsageError("--\(option) needs --listen PORT (the webhook receiver's port)")
        }
        let limits = try ServerLimitOptions.limits(arguments)
        listenAddress = try port.map { try ListenAddress(bind: arguments.value("bind"), port: $0, limits: limits) }
        httpAddress = try arguments.value("http").map { try ListenAddress.endpoint($0, option: "--http") }
        consolePort = try SandboxServeCommand.port(arguments.value("console"), "--console")
        options = try JobsOptions(arguments)
    }

    func run() throws -> Int32 {
        // The endpoints are served on --http's port and on the webhook port.
        var telemetry: ServeTelemetry?
        if httpAddress != nil || listenAddress != nil {
            telemetry = ServeTelemetry(journal: try options.common.openJournal(), state: options.common.state,
                                       kinds: listenAddress == nil ? ["job"] : ["job", "trigger"])
        }
        let (config, scheduler, signals) = try options.scheduler(telemetry: telemetry, check: .unlessClosedCleanly) {
            Console.err("jobs serve: stopping; running fires finish first\n")
        }
        let serving = StopSignal()   // set while the scheduler's loop runs
        telemetry?.require("scheduler") {
            if scheduler.stop.isSet { return "the scheduler is stopping" }
            return serving.isSet ? nil : "the scheduler has not started"
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
            try Listening.start(triggers: config.triggers, common: options.common, address: address, name: "jobs serve",
                                telemetry: telemetry, journal: scheduler.journal)
        }
        let http = try httpAddress.flatMap { address in try telemetry.map { telemetry -> HTTPServer in
            let server = try address.server(telemetry.handler)
            server.start()
            Console.err("jobs serve: health and metrics on \(address.url(port: server.port)) (/healthz, /readyz, /metrics)\n")
            if address.isBeyondLoopback {
                Console.err("jobs serve: \(address.host) is reachable beyond this host: put a reverse proxy that terminates TLS in front, or let only the scraper and probes reach it (docs/operations.md)\n")
            }
            return server
        } }
        serving.fire()
        let retention = DailyRetention.start(config, journal: try options.common.openJournal(), state: options.common.state, name: "jobs serve")
        let console = try consolePort.map { port in
            try ConsoleServing.start(address: ListenAddress(bind: nil, port: port, limits: ConsoleServer.limits), secureCookies: false,
                                     readOnly: false, config: config, triggers: config.triggers,
                                     common: options.common, journal: scheduler.journal, name: "jobs serve",
                                     endpoints: telemetry?.endpoints)
        }
        scheduler.serve(onError: { Console.err("jobs serve: \(TerminalText.text("\($0)"))\n") })
        http?.stop()
        http?.waitUntilStopped()
        listening?.stop()
        console?.stop()
        // Every fire has finished: the journal is closed here, before the process exits,
        // so the next command finds it closed cleanly and skips the integrity check.
        scheduler.journal.closeCleanly()
        withExtendedLifetime((signals, retention)) {}
        Console.err("jobs serve: stopped\n")
        return ExitCode.success
    }
}
