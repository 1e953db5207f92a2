import Foundation
import SystemText

/// A recipe's source and where it lives.
public struct RecipeFile: Sendable {
    /// The path as the user gave it; used in chunk names, so messages read `recipes/x.lua:12:`.
    public let displayPath: String
    /// Where the file is. Made when first asked for, from `path` (hubscript never
    /// changes its working folder): making a relative path into a `URL` is one of the
    /// dearest things a start could do (docs/performance.md), and most runs never ask.
    public var url: URL { givenURL ?? URL(fileURLWithPath: path) }
    private let givenURL: URL?
    /// `url`'s path as it was given (relative paths stay relative).
    public let path: String
    public let source: String

    /// The longest recipe file read (as a module: `ModuleResolver.maxModuleBytes`).
    public static let maxBytes = ModuleResolver.maxModuleBytes

    /// Reads a recipe (a file, a pipe or a device, to its end, but never more than
    /// `maxBytes`). Binary chunks are refused here, before Lua sees them.
    public init(path: String) throws {
        var bytes: [UInt8]
        do { bytes = try FileBytes.read(path, atMost: Self.maxBytes) } catch let error as FileBytes.TooLong {
            throw ScriptFailure(kind: .host, message: "cannot read \(path): it is longer than \(error.limit >> 20) MiB; a recipe may be at most \(error.limit >> 20) MiB")
        } catch {
            throw ScriptFailure(kind: .host, message: "cannot read \(path): \(FileErrorText.reason(error, path: path))")
        }
        if bytes.first == 0x1B {
            throw ScriptFailure(kind: .load, message: "\(path): is a binary (precompiled) chunk; hubscript runs Lua source text only")
        }
        if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes.removeFirst(3) }   // a UTF-8 byte order mark
        guard let text = String(validating: bytes, as: UTF8.self) else {
            throw ScriptFailure(kind: .load, message: "\(path): is not UTF-8 text")
        }
        self.init(displayPath: path, url: nil, path: path, source: text)
    }

    public init(displayPath: String, url: URL, source: String) {
        self.init(displayPath: displayPath, url: url, path: url.path, source: source)
    }

    private init(displayPath: String, url: URL?, path: String, source: String) {
        self.displayPath = displayPath
        self.givenURL = url
        self.path = path
        self.source = source
    }

    static func reason(_ error: Error) -> String { FileErrorText.reason(error) }
}

/// Everything a run needs besides the recipe.
public struct RunConfiguration: Sendable {
    public var limits = RunLimits()
    /// Modules installed as globals (json, log, params, hub, …).
    public var plugins: [Plugin] = []
    /// Folders `require` may load from, searched after the recipe's own folder.
    public var libraryFolders: [URL] = []
    /// Named libraries (`require("ops.x")`), searched after `libraryFolders`.
    public var libraries: [ModuleLibrary] = []
    public var output: any ScriptOutput
    /// Consulted before every gated function call; throw to refuse the call.
    public var gate: (@Sendable (ScriptFunction) throws -> Void)?
    /// Runs on a background thread if the deadline passed and Lua could not be stopped
    /// (see `Watchdog`), with the report so far: the timeout failure, the time since the
    /// start, the memory peak so far. The Lua thread is still stuck (in C code, a
    /// finalizer, or a write to a pipe nobody reads, holding the output's lock), so the
    /// action must not wait on anything the run holds (the CLI's writes with bounded
    /// waits, then exits). The memory peak is 0 once the VM is being closed.
    public var onWatchdog: (@Sendable (RunReport) -> Void)?
    /// Leave the run's Lua state to the process's exit instead of closing it: closing
    /// frees every object the recipe made (and runs its last `__gc` finalizers, which
    /// can call no binding): work that grows with what the recipe built, for memory the
    /// exit gives back anyway. Only for a process that exits right after the run (the
    /// CLI's `run`, `plan`, `apply`, `runs resume`); a process that runs recipe after
    /// recipe must close each one. The host's own objects are released either way.
    public var leavesLuaStateToExit = false

    public init(output: any ScriptOutput) {
        self.output = output
    }
}

/// Runs recipes in a fresh sandboxed Lua state each time.
public enum ScriptRuntime {
    /// Seconds past the deadline before the watchdog acts.
    static let watchdogGrace = 2.0

    /// Loads and runs `recipe`. Never throws: every failure is in the report.
    public static func run(_ recipe: RecipeFile, configuration: RunConfiguration) -> RunReport {
        let start = MonotonicClock.now()
        let limits = configuration.limits.capped(by: .hostCeiling)
        let timeoutFailure = limitFailure(.timeout, limits: limits, hostMessage: nil)
        let running = RunningVM()
        let watchdog: Watchdog
        do {
            watchdog = try Watchdog(seconds: limits.timeoutSeconds + watchdogGrace) {
                configuration.onWatchdog?(RunReport(failure: timeoutFailure, durationSeconds: MonotonicClock.now() - start,
                                                    memoryPeakBytes: running.memoryPeak, instructions: 0))
            }
        } catch {
            return RunReport(failure: ScriptFailure(kind: .host, message: "hubscript: \(error)"),
                             durationSeconds: MonotonicClock.now() - start, memoryPeakBytes: 0, instructions: 0)
        }
        defer { watchdog.disarm() }

        var report = RunReport(failure: nil, durationSeconds: 0, memoryPeakBytes: 0, instructions: 0)
        do {
            let vm = try makeVM(for: recipe, configuration: configuration, limits: limits, start: start)
            running.attach(vm)
            watchdog.interrupt(running, after: start + limits.timeoutSeconds - MonotonicClock.now())
            report.failure = execute(recipe, in: vm, limits: limits)
            vm.leavesStateToProcessExit = configuration.leavesLuaStateToExit
            running.detach()
            report.memoryPeakBytes = vm.memoryPeak
            report.instructions = vm.instructionsExecuted
        } catch let failure as ScriptFailure {
            report.failure = failure
        } catch {
            report.failure = ScriptFailure(kind: .host, message: "hubscript: \(error)")
        }
        report.durationSeconds = MonotonicClock.now() - start
        configuration.output.flush()
        return report
    }

    private static func makeVM(for recipe: RecipeFile, configuration: RunConfiguration, limits: RunLimits,
                               start: Double) throws -> LuaVM {
        let output = configuration.output
        // Made on the first `require`: its folders' real paths cost a few URL operations
        // that a recipe which requires nothing should not pay.
        let (folders, libraries) = (configuration.libraryFolders, configuration.libraries)
        let resolver = OnFirstUse {
            ModuleResolver(folders: [recipe.url.deletingLastPathComponent()] + folders, libraries: libraries)
        }
        let host = [
            ScriptFunction("write_stdout") { call in
                // print hands over the Lua string's bytes as they are, without a copy (a
                // recipe may print tens of MiB); the output decides how to show bytes
                // that are not UTF-8.
                call.withRawBytes(1) { output.printLine(bytes: $0) }
                return .none
            },
            ScriptFunction("module_source") { call in
                let module = try resolver.value.resolve(try call.string(1))
                return .values([module.source, .string(module.chunkName)])
            },
        ]
        let vmLimits = VMLimits(
            memoryBytes: limits.memoryBytes, instructions: limits.instructions ?? 0,
            deadline: start + limits.timeoutSeconds, buildBytes: limits.buildBytes)
        let vm: LuaVM
        do { vm = try LuaVM(limits: vmLimits, host: host) } catch {
            throw ScriptFailure(kind: .host, message: "hubscript: \(error)")
        }
        vm.gate = configuration.gate
        do { try vm.install(configuration.plugins) } catch {
            throw ScriptFailure(kind: .host, message: "hubscript: \(error)")
        }
        return vm
    }

    private static func execute(_ recipe: RecipeFile, in vm: LuaVM, limits: RunLimits) -> ScriptFailure? {
        if let message = vm.loadChunk(source: recipe.source, chunkName: "@" + recipe.displayPath) {
            if vm.limitHit != 0 { return limitFailure(kind(of: vm.limitHit), limits: limits, hostMessage: vm.hostStopMessage) }
            return ScriptFailure(kind: .load, message: message)
        }
        switch vm.call(arguments: []) {
        case .ok: return nil
        case .failed(let f):
            if case .limit(let code) = f.kind {
                return limitFailure(kind(of: code), limits: limits, hostMessage: vm.hostStopMessage)
            }
            return ScriptFailure(kind: .runtime, message: f.message, traceback: f.traceback, structured: f.structured,
                                 location: f.location)
        }
    }

    static func kind(of code: Int32) -> LimitKind { LimitKind(limitCode: code) }

    /// The message for a limit, saying which limit and how to raise it.
    static func limitFailure(_ kind: LimitKind, limits: RunLimits, hostMessage: String?) -> ScriptFailure {
        let message: String
        switch kind {
        case .memory:
            message = "limit exceeded: memory (\(limits.memoryBytes >> 20) MiB); raise limits.memory_mb in the recipe manifest if the recipe really needs more"
        case .instructions:
            message = "limit exceeded: instructions (\(limits.instructions ?? 0)); raise limits.instructions in the recipe manifest if the work is expected"
        case .timeout:
            message = "limit exceeded: timeout (\(formatSeconds(limits.timeoutSeconds))); raise it with --timeout or limits.timeout in the recipe manifest"
        case .host:
            let what = hostMessage ?? "the host stopped the run"
            message = what.hasPrefix("limit exceeded") ? what : "limit exceeded: \(what)"
        }
        return ScriptFailure(kind: .limit(kind), message: message)
    }

    static func formatSeconds(_ s: Double) -> String {
        s == s.rounded() ? "\(Int(s)) s" : String(format: "%.3g s", s)
    }
}

extension ScriptRuntime {
    /// Compiles `recipe` without running it; returns the syntax error, if any.
    public static func syntaxError(in recipe: RecipeFile) -> String? {
        var limits = RunLimits()
        limits.memoryBytes = 64 << 20
        do {
            let vm = try LuaVM(
                limits: VMLimits(memoryBytes: limits.memoryBytes, instructions: 0, deadline: 0, buildBytes: limits.buildBytes),
                host: [])
            return vm.loadChunk(source: recipe.source, chunkName: "@" + recipe.displayPath)
        } catch {
            return "hubscript: \(error)"
        }
    }
}
