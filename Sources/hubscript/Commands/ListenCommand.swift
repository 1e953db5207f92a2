import Foundation
import HTTPKit
import HubClient
import ScriptHost
import RunJournal
import RecipeModules
import Configuration
import Runs
import Automation

/// `hubscript listen`: receives the Hub's webhook deliveries on loopback and runs the
/// configuration's triggers (docs/webhooks.md).
struct ListenCommand: Command {
    static let configuration = CommandConfiguration(
        name: "listen", abstract: "Receive Hub webhook deliveries on 127.0.0.1 and run the configuration's triggers.",
        usage: "[--port P] [--bind ADDRESS] [--max-connections N] [--max-connections-per-address N] | --setup [--url URL]",
        options: [OptionSpec(name: "port", valueName: "port", help: "The port to listen on (default 8490; 0 picks a free one)."),
                  ListenAddress.bindOption] + ServerLimitOptions.specs
            + [OptionSpec(name: "setup", valueName: nil, help: "Register the triggers' webhook at their Hub and store its signing secret in the vault, then exit."),
                  OptionSpec(name: "url", valueName: "url", help: "With --setup: the URL the Hub delivers to (default http://127.0.0.1:PORT/hooks).")]
            + VaultCommands.specs.filter { $0.name != "state-dir" } + CommonOptions.specs,
        discussion: """
        Triggers: triggers = { name = { on = {"user.suspended", "role.*"}, recipe = "…", profile = "…", secret = "webhooks/hub" } }
        A delivery is answered 202 only once it is journalled; a bad signature or a timestamp more than 5 minutes off
        is 401. Each event runs each matching trigger's recipe once, with params.event, under the run id TRIGGER@<event id>.
        SIGTERM or Ctrl-C: the running recipe finishes, then it exits 0.
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

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("listen takes no arguments") }
        address = try ListenAddress(bind: arguments.value("bind"),
                                    port: SandboxServeCommand.port(arguments.value("port"), "--port") ?? 8490,
                                    limits: ServerLimitOptions.limits(arguments))
        common = CommonOptions.Values(arguments)
        if arguments.flag("setup") {
            let url = arguments.value("url") ?? "http://127.0.0.1:\(address.port == 0 ? 8490 : address.port)/hooks"
            guard let parsed = URLComponents(string: url), ["http", "https"].contains(parsed.scheme ?? ""), parsed.host != nil else {
                throw UsageError("--url takes the http(s) URL the Hub delivers to, such as http://127.0.0.1:8490/hooks; got '\(url)'")
            }
            setup = ListenSetup(url: url, common: common, vaultLocation: try VaultCommands.Location(arguments))
        } else {
            if arguments.value("url") != nil { throw UsageError("--url goes with --setup") }
            setup = nil
        }
    }

    func run() throws -> Int32 {
        let (hub, triggers) = try TriggersConfig.load(explicit: common.config)
        guard !triggers.triggers.isEmpty else {
            let source = triggers.source.map { "\($0.path) defines no triggers" } ?? "no configuration file was found"
            throw HubConfigError("nothing to listen for: \(source) (define them in its triggers = { … } table; see docs/webhooks.md)")
        }
        if let setup { return try setup.run(hub: hub, triggers: triggers) }
        let listening = try Listening.start(hub: hub, triggers: triggers, common: common, address: address, name: "listen")
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
        // The running recipe has finished: the journal is closed here, before the process
        // exits, so the next command finds it closed cleanly and skips the integrity check.
        listening.listener.journal.closeCleanly()
        withExtendedLifetime(signals) {}
        Console.err("listen: stopped\n")
        return ExitCode.success
    }
}

/// A started receiver: its HTTP server and the trigger listener behind it (shared by
/// `listen` and `jobs serve --listen`).
struct Listening {
    let server: HTTPServer
    let listener: TriggerListener

    /// `journal`: the process's journal if it has one (`jobs serve --listen`); nil: one is
    /// opened, checked unless it was closed cleanly (so `stop` can close it cleanly).
    static func start(hub: HubConfig, triggers: TriggersConfig, common: CommonOptions.Values, address: ListenAddress,
                      name: String, journal: Journal? = nil) throws -> Listening {
        let journal = try journal ?? common.openJournal(check: .unlessClosedCleanly)
        let listener = TriggerListener(config: triggers, journal: journal, secrets: VaultAccess.resolver(state: common.state),
                                       executor: RecipeTriggerExecutor(hub: hub, common: common, journal: journal))
        listener.onLog = { Console.out(TerminalText.text($0)) }
        listener.locks = journal.runLocks(state: common.state)
        let server = try address.server { listener.handle($0) }
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
    let hub: HubConfig
    let common: CommonOptions.Values
    let journal: Journal

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
        let result = run(trigger, event, value, lock: lock, output: output)
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
            libraries = try LibrariesConfig.load(explicit: common.config, state: common.state)
            let path = try trigger.library.map { try LibraryRecipe.file($0, in: libraries).path } ?? trigger.recipe.path
            do { prepared = try PreparedRecipe(path: path, paramValues: ["event": value]) } catch {
                throw HubConfigError("\(error) (a trigger's recipe declares params = { event = { type = \"table\" } })")
            }
        } catch {
            return FireResult(exitCode: ExitCode.usage, message: "\(error)")
        }
        if let problem = NeedsCheck.problem(in: prepared.file, manifest: prepared.manifest) {
            return FireResult(exitCode: ExitCode.usage, message: problem)
        }
        do {
            let profile = trigger.profile ?? common.profile
            let connection = try HubConnection.open(config: hub, profile: profile, state: common.state, embeddedHub: EmbeddedSandbox())
            var request = HubRunRequest()
            request.libraries = libraries
            request.allow = trigger.allow.map { AllowedPermissions($0, caller: "trigger \"\(trigger.name)\"") }
            request.runID = event.runID
            request.heldLock = lock
            request.progress = MemoryProgressReporter()
            request.secrets = VaultAccess.resolver(state: common.state)
            request.dispatch = try common.dispatchTarget(hub, profile: profile)
            request.dispatchTargets = try common.dispatchTargets(prepared.manifest.targets, hub, profile: profile)
            let outcome = try HubRecipeRun.execute(prepared, request: request, connection: connection, journal: journal,
                                                   state: common.state, output: output, onWatchdog: { _ in
                Console.err("\(event.runID): the recipe did not stop at its deadline; hubscript exits (code 4)\n")
                _exit(ExitCode.limit)
            })
            guard let failure = outcome.failure else { return FireResult(exitCode: outcome.exitCode) }
            return FireResult(exitCode: outcome.exitCode, message: (failure.location.map { "\($0): " } ?? "") + failure.message)
        } catch let denied as HubGate.Denied {
            return FireResult(exitCode: ExitCode.capabilityDenied, message: denied.description)
        } catch let notAllowed as NotAllowed {
            return FireResult(exitCode: ExitCode.capabilityDenied, message: notAllowed.description)
        } catch {
            return FireResult(exitCode: ExitCode.usage, message: "\(error)")
        }
    }
}
