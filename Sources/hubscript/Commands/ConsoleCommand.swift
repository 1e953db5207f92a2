import Foundation
import Automation
import HTTPKit
import HubClient
import RunJournal
import Configuration
import Console

/// `hubscript console`: the operator console on 127.0.0.1 (docs/console.md).
struct ConsoleCommand: Command {
    static let configuration = CommandConfiguration(
        name: "console", abstract: "Serve the operator console: runs, jobs, triggers and plans in a browser, on 127.0.0.1.",
        usage: "[--port P] [--bind ADDRESS --allow-remote] [--read-only]",
        options: [OptionSpec(name: "port", valueName: "port", help: "The port to serve on (default 8470; 0 picks a free one)."),
                  OptionSpec(name: "bind", valueName: "address",
                             help: "The address to serve on (default 127.0.0.1); another needs --allow-remote and a TLS proxy in front."),
                  OptionSpec(name: "allow-remote", valueName: nil,
                             help: "Let --bind name an address other hosts reach: only behind a reverse proxy that terminates TLS."),
                  OptionSpec(name: "read-only", valueName: nil, help: "No sign-in and no actions: pages only.")]
            + CommonOptions.specs,
        discussion: """
        It prints one URL with an access token (…/?token=…): open it; the token sets a cookie and leaves the
        address. Anyone with the URL can read the journal; actions (fire now) also need a Hub user signed in
        through the console, holding the permissions the action needs. The journal is the configuration's
        (journal = …) or the state directory's. SIGTERM or Ctrl-C stops it (a fire it started finishes first).
        """)

    let address: ListenAddress
    let allowRemote: Bool
    let readOnly: Bool
    let common: CommonOptions.Values

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("console takes no arguments") }
        address = try ListenAddress(bind: arguments.value("bind"),
                                    port: SandboxServeCommand.port(arguments.value("port"), "--port") ?? 8470,
                                    limits: ConsoleServer.limits)
        allowRemote = arguments.flag("allow-remote")
        readOnly = arguments.flag("read-only")
        common = try CommonOptions.Values(arguments)
        if address.isBeyondLoopback && !allowRemote {
            throw UsageError("--bind \(address.host) reaches beyond this host: the console must then sit behind a reverse proxy "
                + "that terminates TLS; say so with --allow-remote (docs/console.md, \"Remote use\")")
        }
    }

    func run() throws -> Int32 {
        let config = common.configuration
        let triggers = config.triggers
        let journal = try common.openJournal()
        // /healthz, /readyz (the journal answers; the console is not stopping) and /metrics.
        let telemetry = ServeTelemetry(journal: try common.openJournal(), state: common.state, kinds: ["job"])
        let stopping = StopSignal()
        telemetry.require("console") { stopping.isSet ? "the console is stopping" : nil }
        let serving = try ConsoleServing.start(address: address, secureCookies: allowRemote && address.isBeyondLoopback,
                                               readOnly: readOnly, config: config, triggers: triggers, common: common,
                                               journal: journal, name: "console", endpoints: telemetry.endpoints)
        let retention = DailyRetention.start(config, journal: try common.openJournal(), state: common.state, name: "console")
        let stopped = DispatchSemaphore(value: 0)
        let signals = [SIGINT, SIGTERM].map { signo -> DispatchSourceSignal in
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler { stopped.signal() }
            source.resume()
            return source
        }
        stopped.wait()
        stopping.fire()
        Console.err("console: stopping\n")
        serving.stop()
        withExtendedLifetime((signals, retention)) {}
        Console.err("console: stopped\n")
        return ExitCode.success
    }
}
