import Foundation
import HTTPKit
import HubClient
import ScriptHost
import RunJournal
import RecipeModules
import Configuration
import Runs
import Automation
import Telemetry
import Console

/// `hubscript listen`: receives the Hub's webhook deliveries on loopback and runs the
/// configuration's triggers (docs/webhooks.md).
struct ListenCommand: Command {
    static let configuration = CommandConfiguration(
        name: "listen", abstract: "Receive Hub webhook deliveries on 127.0.0.1 and run the configuration's triggers.",
        usage: "[--port P] [--bind ADDRESS] [--max-connections N] [--max-connections-per-address N] [--console PORT] | --setup [--url URL]",
        options: [OptionSpec(name: "port", valueName: "port", help: "The port to listen on (default 8490; 0 picks a free one)."),
                  ListenAddress.bindOption] + ServerLimitOptions.specs + [ConsoleServing.portOption]
            + [OptionSpec(name: "setup", valueName: nil, help: "Register the triggers' webhook at their Hub and store its signing secret in the vault, then exit."),
                  OptionSpec(name: "url", valueName: "url", help: "With --setup: the URL the Hub delivers to (default http://127.0.0.1:PORT/hooks).")]
            + VaultCommands.specs.filter { $0.name != "state-dir" } + CommonOptions.specs,
        discussion: """
        Triggers: triggers = { name = { on = {"user.suspended", "role.*"}, recipe = "…", profile = "…", secret = "webhooks/hub" } }
        A delivery is answered 202 only once it is journalled; a bad signature or a timestamp more than 5 minutes off
        is 401. Each event runs each matching trigger's recipe once, with params.event, under the run id TRIGGER@<event id>.
        SIGTERM or Ctrl-C: the running recipe finishes, then it exits 0.
        GET /healthz, /readyz and /metrics answer probes and Prometheus (docs/operations.md).
        It binds 127.0.0.1 unless --bind names another address (0.0.0.0, ::, or one of this
        host's), for a reverse proxy that terminates TLS in front of it (docs/operations.md).
        --setup creates (or repairs) the webhook each trigger's Hub delivers to and puts its
        signing secret straight into the vault entry the trigger names; run it again: it
        changes nothing. The vault key comes from --key-file, --passphrase or the environment.
        """)

    let address: ListenAddress
    let common: CommonOptions.Values
    /// `--setup`: what to register instead of listening.
    let setup: ListenSetup?
    /// `--console PORT`: the operator console beside the receiver, on 127.0.0.1.
    let consolePort: UInt16?

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("listen takes no arguments") }
        address = try ListenAddress(bind: arguments.value("bind"),
                                    port: SandboxServeCommand.port(arguments.value("port"), "--port") ?? 8490,
                                    limits: ServerLimitOptions.limits(arguments))
        common = try CommonOptions.Values(arguments)
        consolePort = try SandboxServeCommand.port(arguments.value("console"), "--console")
        if arguments.flag("setup") {
            let url = arguments.value("url") ?? "http://127.0.0.1:\(address.port == 0 ? 8490 : address.port)/hooks"
            guard let parsed = URLComponents(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw UsageError("--url takes the http(s) URL the Hub delivers to, such as http://127.0.0.1:8490/hooks; got '\(url)'")
            }
            if consolePort != nil { throw UsageError("--console goes without --setup (which registers the webhook, then exits)") }
            setup = ListenSetup(url: url, common: common, vaultLocation: try VaultCommands.Location(arguments))
        } else {
            if arguments.value("url") != nil { throw UsageError("--url goes with --setup") }
            setup = nil
        }
    }

    func run() throws -> Int32 {
        let triggers = common.configuration.triggers
        guard !triggers.triggers.isEmpty else {
            let source = triggers.source.map { "\($0.path) defines no triggers" } ?? "no configuration file was found"
            throw HubConfigError("nothing to listen for: \(source) (define them in its triggers = { … } table; see docs/webhooks.md)")
        }
        if let setup { return try setup.run(triggers: triggers) }
        let telemetry = ServeTelemetry(journal: try common.openJournal(), state: common.state, kinds: ["trigger"])
        let listening = try Listening.start(triggers: triggers, common: common, address: address, name: "listen",
                                            telemetry: telemetry)
        let console = try consolePort.map { port in
            try ConsoleServing.start(address: ListenAddress(bind: nil, port: port, limits: ConsoleServer.limits), secureCookies: false,
                                     readOnly: false, config: common.configuration, triggers: triggers,
                                     common: common, journal: listening.listener.journal, name: "listen",
                                     endpoints: telemetry.endpoints)
        }
        let retention = DailyRetention.start(common.configuration, journal: try common.openJournal(), state: common.state, name: "listen")
        let stopped = DispatchSemaphore(value: 0)
        let signals = [SIGINT, SIGTERM].map { signo -> DispatchSourceSignal in
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler { stopped.signal() }
            source.resume()
            return source
        }
        stopped.wait()
        Console.err("listen: stopping; the running recipe finishes first\n")
        listening.stop()
        console?.stop()
        // The running recipe has finished: the journal is closed here, before the process
        // exits, so the next command finds it closed cleanly and skips the integrity check.
        listening.listener.journal.closeCleanly()
        withExtendedLifetime((signals, retention)) {}
        Console.err("listen: stopped\n")
        return ExitCode.success
    }
}

/// A started receiver: its HTTP server and the trigger listener behind it (shared by
/// `listen` and `jobs serve --listen`). With `telemetry`, the server also answers
/// `GET /healthz`, `/readyz` (the listener must be taking events) and `/metrics`.
struct Listening {
    let server: HTTPServer
    let listener: TriggerListener

    /// Every delivery runs with the configuration the command read at its start
    /// (`common`): a changed file takes effect when the command starts again.
    /// `journal`: the process's journal if it has one (`jobs serve --listen`); nil: one is
    /// opened, checked unless it was closed cleanly (so `stop` can close it cleanly).
    static func start(triggers: TriggersConfig, common: CommonOptions.Values, address: ListenAddress,
                      name: String, telemetry: ServeTelemetry? = nil, journal: Journal? = nil) throws -> Listening {
        let journal = try journal ?? common.openJournal(check: .unlessClosedCleanly)
        var executor = RecipeTriggerExecutor(common: common, journal: journal)
        executor.telemetry = telemetry
        let listener = TriggerListener(config: triggers, journal: journal, secrets: VaultAccess.resolver(state: common.state),
                                       executor: executor)
        listener.onLog = { Console.out(TerminalText.text($0)) }
        listener.locks = journal.runLocks(state: common.state)
        if let telemetry {
            listener.onDelivery = { telemetry.recordDelivery($0) }
            telemetry.require("listener") { listener.isRunning ? nil : "the webhook listener is not taking events" }
        }
        let endpoints = telemetry?.endpoints
        let server = try address.server { endpoints?.respond(to: $0) ?? listener.handle($0) }
        try listener.start()
        server.start()
        let names = triggers.triggers.map { "\($0.name) (\($0.on.joined(separator: ", ")))" }.joined(separator: "; ")
        Console.err("\(name): listening on \(address.url(port: server.port)) for \(TerminalText.field(names))\n")
        if let shortfall = ServerLimitOptions.shortfall(server, name: name) { Console.err(shortfall) }
        if address.isBeyondLoopback {
            Console.err("\(name): \(address.host) is reachable beyond this host: put a reverse proxy that terminates TLS in front (docs/operations.md)\n")
        }
        return Listening(server: server, listener: listener)
    }

    /// Stops taking deliveries, lets the running recipe finish.
    func stop() {
        server.stop()
        server.waitUntilStopped()
        listener.stopAndWait()
    }
}

/// Runs a trigger's recipe as `hubscript run RECIPE --run-id TRIGGER@EVENT` would, with
/// `params.event` the event (a `table` parameter the recipe must declare): the trigger's
/// profile and `allow`, the configuration's libraries (pins checked), the vault, every write journalled under the event's run id.
struct RecipeTriggerExecutor: TriggerExecutor {
    let common: CommonOptions.Values
    let journal: Journal
    /// Counts each event's run and its Hub traffic (`/metrics`), if set.
    var telemetry: ServeTelemetry?

    func execute(_ trigger: ConfiguredTrigger, event: TriggerEventRecord, value: ScriptValue) -> FireResult {
        execute(trigger, event: event, value: value, lock: nil)
    }

    func execute(_ trigger: ConfiguredTrigger, event: TriggerEventRecord, value: ScriptValue,
                 lock: any HeldRunLock) -> FireResult {
        execute(trigger, event: event, value: value, lock: Optional(lock))
    }

    /// `lock`: the event's run lock, taken by the listener (nil: the run takes it).
    private func execute(_ trigger: ConfiguredTrigger, event: TriggerEventRecord, value: ScriptValue,
                         lock: (any HeldRunLock)?) -> FireResult {
        let output = ConsoleOutput(json: false)
        let started = Date()
        let result = run(trigger, event, value, lock: lock, output: output)
        telemetry?.metrics.recordRun(kind: "trigger", exitCode: result.exitCode, seconds: Date().timeIntervalSince(started),
                                     resumed: event.status == .running || event.status == .failed)
        if let message = result.message {
            output.writeStderr("\(TerminalText.field(event.runID)): error: \(TerminalText.text(message))\n")
        }
        return result
    }

    private func run(_ trigger: ConfiguredTrigger, _ event: TriggerEventRecord, _ value: ScriptValue,
                     lock: (any HeldRunLock)?, output: ConsoleOutput) -> FireResult {
        let prepared: PreparedRecipe
        let libraries: [ModuleLibrary]
        do {
            // The configuration's libraries, pins checked; a `LIB:RECIPE` trigger's recipe is among them.
            libraries = try common.configuration.libraries(state: common.state)
            let path = try trigger.library.map { try LibraryRecipe.file($0, in: libraries).path } ?? trigger.recipe.path
            do { prepared = try PreparedRecipe(path: path, paramValues: ["event": value]) } catch {
                throw HubConfigError("\(error) (a trigger's recipe declares params = { event = { type = \"table\" } })")
            }
        } catch {
            return FireResult(stoppedBy: error)
        }
        if let problem = NeedsCheck.problem(in: prepared.file, manifest: prepared.manifest) {
            return FireResult(exitCode: ExitCode.usage, message: problem)
        }
        do {
            let profile = trigger.profile ?? common.profile
            // A 401 or a Hub out of reach is the profile's failure, as for `hubscript run`.
            let witness = HubReachWitness()
            let connection = try HubConnection.open(config: common.hub, profile: profile, state: common.state, embeddedHub: EmbeddedSandbox(),
                                                   observe: witness.observer(then: telemetry?.hubObserver))
            var request = HubRunRequest()
            let reach = HubReachContext(common: common, profile: connection.profileName, witness: witness)
            request.rereadFailure = { failure, runID, counts in reach.reread(failure, runID: runID, counts: counts, mode: .run) }
            request.libraries = libraries
            request.allow = trigger.allow.map { AllowedPermissions($0, caller: "trigger \"\(trigger.name)\"") }
            request.runID = event.runID
            request.heldLock = lock
            request.progress = MemoryProgressReporter()
            request.secrets = VaultAccess.resolver(state: common.state)
            request.dispatch = try common.dispatchTarget(common.hub, profile: profile)
            request.dispatchTargets = try common.dispatchTargets(prepared.manifest.targets, common.hub, profile: profile)
            let outcome = try HubRecipeRun.execute(prepared, request: request, connection: connection, journal: journal,
                                                   state: common.state, output: output, onWatchdog: { _ in
                Console.err("\(event.runID): the recipe did not stop at its deadline; hubscript exits (code 4)\n")
                _exit(ExitCode.limit)
            })
            telemetry?.metrics.recordCounts(outcome.counts)
            return FireResult(outcome)
        } catch {
            return FireResult(stoppedBy: error)
        }
    }
}
