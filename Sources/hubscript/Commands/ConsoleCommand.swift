import Foundation
import HTTPKit
import HubClient
import RunJournal
import Configuration
import Console
import ScriptHost

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
        common = CommonOptions.Values(arguments)
        if address.isBeyondLoopback && !allowRemote {
            throw UsageError("--bind \(address.host) reaches beyond this host: the console must then sit behind a reverse proxy "
                + "that terminates TLS; say so with --allow-remote (docs/console.md, \"Remote use\")")
        }
    }

    func run() throws -> Int32 {
        let config = try LoadedConfig.load(explicit: common.config)
        let (_, triggers) = try TriggersConfig.load(explicit: common.config)
        let journal = try common.openJournal()
        let actions = readOnly ? nil : ConsoleCLIActions(config: config, common: common, journal: journal)
        let context = ConsoleContext(journal: journal, locks: journal.runLocks(state: common.state), jobs: config.jobs,
                                     triggers: triggers, actions: actions)
        ServerLimitOptions.prepareDescriptors(servers: 1, limits: address.limits)
        // The cookie's name needs the port, known once bound: requests wait for the console (503 until then).
        let ready = ConsoleHolder()
        let server = try HTTPServer(host: address.host, port: address.port, limits: address.limits, beyondLoopback: true) { request in
            ready.console?.handle(request) ?? HTTPResponseMessage(status: 503)
        }
        let access = ConsoleAccess(port: server.port, secureCookies: allowRemote && address.isBeyondLoopback)
        let console = ConsoleServer(context: context, access: access)
        ready.console = console
        let stopped = DispatchSemaphore(value: 0)
        let signals = [SIGINT, SIGTERM].map { signo -> DispatchSourceSignal in
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler { stopped.signal() }
            source.resume()
            return source
        }
        server.start()
        Console.err("console: serving the journal \(TerminalText.field(journal.path)) (\(readOnly ? "read-only" : "actions need a Hub sign-in")); open:\n")
        Console.out(address.url(port: server.port) + "/?token=" + access.token + "\n")
        if address.isBeyondLoopback {
            Console.err("console: \(address.host) is reachable beyond this host: serve it only through a reverse proxy that terminates TLS (docs/console.md)\n")
        }
        stopped.wait()
        Console.err("console: stopping\n")
        server.stop()
        server.waitUntilStopped()
        actions?.waitForFires()
        withExtendedLifetime((signals, console)) {}
        Console.err("console: stopped\n")
        return ExitCode.success
    }
}

/// The console once made, read by the server's threads.
private final class ConsoleHolder: @unchecked Sendable {
    private let lock = NSLock()
    private var made: ConsoleServer?
    var console: ConsoleServer? {
        get { lock.withLock { made } }
        set { lock.withLock { made = newValue } }
    }
}
