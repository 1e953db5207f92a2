import Foundation
import Telemetry
import HTTPKit
import RunJournal
import ScriptHost
import Configuration
import Console
import Synchronization

/// A started console: its server and what its actions run (shared by `console`, and by
/// `jobs serve --console` and `listen --console`, which serve it beside their work).
struct ConsoleServing {
    let server: HTTPServer
    let console: ConsoleServer
    let actions: ConsoleCLIActions?

    static let portOption = OptionSpec(
        name: "console", valueName: "port",
        help: "Also serve the operator console on 127.0.0.1 at this port (0: a free one); it prints its URL (docs/console.md).")

    /// Binds and starts the console; prints its URL (with the access token) on stdout
    /// and what it serves on stderr, each line starting with `name:`.
    /// `endpoints`: the process's `/healthz`, `/readyz` and `/metrics`, answered before the
    /// console's pages and without its token (probes and scrapers hold none).
    static func start(address: ListenAddress, secureCookies: Bool, readOnly: Bool, config: LoadedConfiguration,
                      triggers: TriggersConfig, common: CommonOptions.Values, journal: Journal, name: String,
                      endpoints: HealthEndpoints? = nil) throws -> ConsoleServing {
        let actions = readOnly ? nil : ConsoleCLIActions(config: config, common: common, journal: journal)
        var context = ConsoleContext(journal: journal, locks: journal.runLocks(state: common.state), jobs: config.jobs,
                                     triggers: triggers, actions: actions)
        context.approvals = config.approvals
        ServerLimitOptions.prepareDescriptors(servers: 1, limits: address.limits)
        // The cookie's name needs the port, known once bound: until the console is made, 503.
        let ready = ConsoleHolder()
        let server = try HTTPServer(host: address.host, port: address.port, limits: address.limits, beyondLoopback: true) { request in
            endpoints?.respond(to: request) ?? ready.console?.handle(request) ?? HTTPResponseMessage(status: 503)
        }
        let access = ConsoleAccess(port: server.port, secureCookies: secureCookies)
        let console = ConsoleServer(context: context, access: access)
        ready.console = console
        server.start()
        Console.err("\(name): console on the journal \(TerminalText.field(journal.path)) "
            + "(\(readOnly ? "read-only" : "actions need a Hub sign-in")); open:\n")
        Console.out(address.url(port: server.port) + "/?token=" + access.token + "\n")
        if address.isBeyondLoopback {
            Console.err("\(name): \(address.host) is reachable beyond this host: serve the console only through a reverse proxy that terminates TLS (docs/console.md)\n")
        }
        return ConsoleServing(server: server, console: console, actions: actions)
    }

    /// Stops serving; waits for the fires the console started.
    func stop() {
        console.beginStopping()
        server.stop()
        server.waitUntilStopped()
        actions?.waitForFires()
    }
}

/// The console once made, read by the server's threads.
private final class ConsoleHolder: Sendable {
    private let made = Mutex<ConsoleServer?>(nil)
    var console: ConsoleServer? {
        get { made.withLock { $0 } }
        set { made.withLock { $0 = newValue } }
    }
}
