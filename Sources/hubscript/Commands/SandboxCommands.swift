import Dispatch
import Foundation
import HTTPKit
import HubClient
import HubSandbox

enum SandboxCommands {
    static let group = CommandGroup(
        name: "sandbox", abstract: "Serve or reset the built-in sandbox Hub.",
        subcommands: [HubscriptCLI.entry(SandboxServeCommand.self), HubscriptCLI.entry(SandboxResetCommand.self),
                      HubscriptCLI.entry(SandboxDispatchLogCommand.self)])
}

/// `hubscript sandbox serve`: the sandbox Hub and Dispatch over HTTP on loopback.
struct SandboxServeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "sandbox serve",
        abstract: "Serve the sandbox Hub and Dispatch over HTTP on 127.0.0.1 until Ctrl-C.",
        usage: "[--port P] [--dispatch-port P] [--faults SPEC] [--rate-limits standard|off] [--memory] [--seed N] [--max-connections N] [--max-connections-per-address N]",
        options: [
            OptionSpec(name: "port", valueName: "port", help: "The Hub's port (default 8470; 0 picks a free one)."),
            OptionSpec(name: "dispatch-port", valueName: "port", help: "Dispatch's port (default: the Hub's + 1)."),
            OptionSpec(name: "faults", valueName: "spec", help: "Inject faults, e.g. error=0.1,unavailable=0.05,retry_after=1,latency=20ms,lost=0.1,seed=7."),
            OptionSpec(name: "rate-limits", valueName: "mode", help: "standard (the limits of docs/hub-api.md) or off (default: standard)."),
            OptionSpec(name: "memory", valueName: nil, help: "Serve a fresh in-memory sandbox instead of the state directory's."),
            OptionSpec(name: "seed", valueName: "n", help: "Seed for --memory (default 1)."),
            OptionSpec(name: "users", valueName: "n", help: "Users to seed with --memory (default 200)."),
            OptionSpec(name: "audit-events", valueName: "n", help: "Audit events to seed with --memory (default 3000)."),
        ] + ServerLimitOptions.specs + CommonOptions.specs.filter { $0.name == "state-dir" },
        discussion: """
        Point a profile at it: profiles = { local = { hub_url = "http://127.0.0.1:8470", api_key = "satk_test_jobs_sandbox_0000000000000000" } }
        Fixed accounts, keys and tokens: docs/sandbox.md.
        """)

    let port: UInt16
    let dispatchPort: UInt16?
    let faults: FaultSpec
    let rateLimits: SandboxOptions.RateLimits
    let memory: Bool
    let seed: Int
    let scale: SandboxOptions.Scale
    let state: StateDirectory
    let limits: HTTPServerLimits

    init(_ arguments: ParsedArguments) throws {
        port = try Self.port(arguments.value("port"), "--port") ?? 8470
        limits = try ServerLimitOptions.limits(arguments)
        dispatchPort = try Self.port(arguments.value("dispatch-port"), "--dispatch-port")
        do { faults = try arguments.value("faults").map { try FaultSpec(parsing: $0) } ?? .none } catch {
            throw UsageError("--faults: \(error)")
        }
        switch arguments.value("rate-limits") ?? "standard" {
        case "standard": rateLimits = .standard
        case "off": rateLimits = .off
        case let other: throw UsageError("--rate-limits takes standard or off, got '\(other)'")
        }
        memory = arguments.flag("memory")
        seed = try Self.count(arguments.value("seed"), "--seed") ?? 1
        var scale = SandboxOptions.Scale()
        if let u = try Self.count(arguments.value("users"), "--users") { scale.users = u }
        if let a = try Self.count(arguments.value("audit-events"), "--audit-events") { scale.auditEvents = a }
        if !memory && (arguments.value("users") != nil || arguments.value("audit-events") != nil || arguments.value("seed") != nil) {
            throw UsageError("--seed, --users and --audit-events go with --memory (use 'hubscript sandbox reset' for the stored sandbox)")
        }
        self.scale = scale
        state = CommonOptions.stateDirectory(arguments)
    }

    static func port(_ text: String?, _ name: String) throws -> UInt16? {
        guard let text else { return nil }
        guard let p = UInt16(text) else { throw UsageError("\(name) takes a port number 0–65535, got '\(text)'") }
        return p
    }

    static func count(_ text: String?, _ name: String) throws -> Int? {
        guard let text else { return nil }
        guard let n = Int(text), n >= 0 else { throw UsageError("\(name) takes a whole number, got '\(text)'") }
        return n
    }

    /// Takes the state directory's serve lock, so `sandbox reset` can warn that this
    /// server keeps its old data. Without it the server still runs.
    private func markServed(url: String) -> SandboxServeLock? {
        do {
            return try SandboxServeLock.acquire(sandboxFile: try state.sandboxFile, description: "pid \(getpid()), \(url)")
        } catch {
            Console.err("hubscript sandbox serve: warning: \(error); 'hubscript sandbox reset' will not warn that this server runs\n")
            return nil
        }
    }

    func run() throws -> Int32 {
        let hub: HubSandbox
        do {
            hub = memory
                ? try HubSandbox(options: SandboxOptions(storage: .memory, seed: seed, scale: scale, rateLimits: rateLimits, faults: faults))
                : try EmbeddedSandbox.open(state: state, rateLimits: rateLimits, faults: faults)
        } catch {
            Console.err("hubscript sandbox serve: \(error)\n")
            return ExitCode.usage
        }
        let dispatch: StoredDispatchSandbox
        do {
            dispatch = try StoredDispatchSandbox(storage: memory ? .memory : .file(try state.sandboxFile), faults: faults,
                                                 rateLimits: rateLimits)
        } catch {
            Console.err("hubscript sandbox serve: cannot open the sandbox Dispatch: \(error)\n")
            return ExitCode.usage
        }
        let hubServer: HTTPServer
        let dispatchServer: HTTPServer
        do {
            ServerLimitOptions.prepareDescriptors(servers: 2, limits: limits)
            hubServer = try HTTPServer(port: port, limits: limits, handler: { hub.handle($0) })
            dispatchServer = try HTTPServer(port: dispatchPort ?? (port == 0 ? 0 : port &+ 1), limits: limits,
                                            handler: { dispatch.handle($0) })
        } catch {
            Console.err("hubscript sandbox serve: \(error)\n")
            return ExitCode.usage
        }
        let signals = [SIGINT, SIGTERM].map { signo -> DispatchSourceSignal in
            signal(signo, SIG_IGN)
            let source = DispatchSource.makeSignalSource(signal: signo, queue: .global())
            source.setEventHandler {
                hubServer.stop()
                dispatchServer.stop()
            }
            source.resume()
            return source
        }
        if let shortfall = ServerLimitOptions.shortfall(hubServer, name: "hubscript sandbox serve") { Console.err(shortfall) }
        let serveLock = memory ? nil : markServed(url: "http://127.0.0.1:\(hubServer.port)")
        hubServer.start()
        dispatchServer.start()
        hub.startWebhookDelivery()
        let where_ = memory ? "in memory, seed \(seed)" : (try? state.sandboxFile.path) ?? state.url.path
        Console.out("""
        Sandbox Hub   http://127.0.0.1:\(hubServer.port)   (\(where_); rate limits \(rateLimits == .standard ? "standard" : "off")\(faults.isNone ? "" : "; faults on"))
        Dispatch      http://127.0.0.1:\(dispatchServer.port)
        API key (all permissions): \(SandboxFixtures.jobsKeySecret)
        Ctrl-C stops.

        """)
        hubServer.waitUntilStopped()
        dispatchServer.waitUntilStopped()
        withExtendedLifetime((signals, serveLock)) {}
        Console.err("sandbox stopped\n")
        return ExitCode.success
    }
}

/// `hubscript sandbox reset`: wipe the stored sandbox Hub and seed it again. A
/// `sandbox serve` of the same state directory keeps the old database open (its file
/// is gone, its data is not), so reset warns when one holds the serve lock.
struct SandboxResetCommand: Command {
    static let configuration = CommandConfiguration(
        name: "sandbox reset",
        abstract: "Wipe the built-in sandbox Hub in the state directory and seed it again.",
        usage: "[--seed N] [--users N] [--audit-events N]",
        options: [
            OptionSpec(name: "seed", valueName: "n", help: "The seed for the demo data (default 1)."),
            OptionSpec(name: "users", valueName: "n", help: "How many users to seed (default 200)."),
            OptionSpec(name: "audit-events", valueName: "n", help: "How many audit events to seed (default 3000)."),
        ] + CommonOptions.specs.filter { $0.name == "state-dir" })

    let seed: Int
    let scale: SandboxOptions.Scale
    let state: StateDirectory

    init(_ arguments: ParsedArguments) throws {
        seed = try SandboxServeCommand.count(arguments.value("seed"), "--seed") ?? 1
        var scale = SandboxOptions.Scale()
        if let u = try SandboxServeCommand.count(arguments.value("users"), "--users") { scale.users = u }
        if let a = try SandboxServeCommand.count(arguments.value("audit-events"), "--audit-events") { scale.auditEvents = a }
        self.scale = scale
        state = CommonOptions.stateDirectory(arguments)
    }

    func run() throws -> Int32 {
        let file = try state.sandboxFile
        for suffix in ["", "-wal", "-shm"] {
            try? FileManager.default.removeItem(atPath: file.path + suffix)
        }
        _ = try HubSandbox(options: SandboxOptions(storage: .file(file), seed: seed, scale: scale, rateLimits: .off))
        Console.out("sandbox reset: \(file.path) seeded with seed \(seed) (\(scale.users) users, \(scale.auditEvents) audit events)\n")
        if let server = SandboxServeLock.holder(sandboxFile: file) {
            Console.err("""
                hubscript sandbox reset: warning: a 'hubscript sandbox serve' (\(server.isEmpty ? "pid unknown" : server)) \
                is serving this state directory and keeps its old data; stop it (Ctrl-C) and start it again to serve the new one

                """)
        }
        return ExitCode.success
    }
}
