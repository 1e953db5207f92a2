import Foundation
import SystemText
import HubClient
import ScriptHost
import RunJournal
import Secrets
import RecipeModules
import Configuration

/// How a recipe runs against a Hub: live, plan (writes recorded, not sent) or apply.
public struct HubRunRequest: Sendable {
    public enum Mode: Sendable { case run, plan, apply(Plan) }

    public var mode: Mode = .run
    /// Resume this run (journalled writes replay) or, new, use it as the run id.
    public var runID: String?
    /// Resume even if the recipe file changed since the run started.
    public var force = false
    /// `runs resume`, `run --run-id`: a run of `runID` that already succeeded is not run
    /// again (its outputs stay as they are): `execute` throws `NothingToResume`. Off for
    /// jobs and triggers, whose run ids the scheduler and the receiver manage.
    public var resumesOnlyUnfinished = false
    /// The bound of the run's record of Hub reads, every pass together (`RecordedReads`).
    public var maxRecordedReads = RecordedReads.defaultMaxCount
    public var maxRecordedReadBytes = RecordedReads.defaultMaxBytes
    /// `--max-writes`: the lower of this and the manifest's `limits.writes` applies.
    public var maxWrites: Int?
    /// `--timeout`: overrides the manifest.
    public var timeout: Double?
    /// Folders `require` may load from.
    public var libraryFolders: [URL] = []
    /// The configuration's named libraries (`require("ops.x")`), with their pins: a
    /// recipe that is itself a library file is checked against its pin too.
    public var libraries: [ModuleLibrary] = []
    /// What the caller lets the recipe ask for (a job's or trigger's `allow`,
    /// `--allow`); nil: no bound beyond the profile's Capabilities.
    public var allow: AllowedPermissions?
    /// Where `export.*` writes (`--out`); default: `runs/<run id>/` in the state directory.
    public var outputFolder: URL?
    /// Progress bars (`progress(…)`); default: on stderr when it is a terminal.
    public var progress: (any ProgressReporter)?
    /// Plugins beyond json, log, params and hub (export, csv, progress, …), made per run.
    public var extraPlugins: @Sendable (HubRunEnvironment) -> [Plugin] = { _ in [] }
    /// Called once the run holds its lock and is recorded in the journal, before any of
    /// the recipe runs: the CLI announces the run id (`start` event, stderr line).
    public var onStart: @Sendable (RunRecord) -> Void = { _ in }
    /// Where the bindings that take credentials find the values behind secret handles
    /// (the vault); nil: no vault is open, and `vault.secret` says how to open one.
    public var secrets: (any SecretResolver)?
    /// The process's redactor (`SecretRedactor`): the parent of the run's own, which is
    /// made for the run; it masks what the process's runs share (the console, the journal).
    public var processRedactor: SecretRedactor = .shared
    /// The profile's Dispatch, where `dispatch.send` goes (nil: none; see `DispatchTarget`).
    public var dispatch: DispatchTarget?
    /// The Dispatch targets the recipe declares (`targets = {…}`), by name, as the
    /// configuration defines them for the run's profile (`DispatchTarget.named`); a
    /// declared target missing here, or unconfigured, stops the run before it starts.
    public var dispatchTargets: [String: DispatchTarget] = [:]
    /// The lock of `runID`, taken by the caller and kept by it (the job scheduler claims
    /// a fire under its run's lock); nil: `execute` takes the lock and releases it.
    public var heldLock: (any HeldRunLock)?
    /// Reads the recipe's uncaught failure again before the run is reported and
    /// journalled (with the run's id and counts): the CLI reports a Hub that refused the
    /// credential or could not be reached as the profile's failure (`HubReachFailure`),
    /// with its exit code. nil, or nil returned: the failure stays as it is.
    public var rereadFailure: (@Sendable (ScriptFailure, _ runID: String, RunCounts) -> (failure: ScriptFailure, exitCode: Int32)?)?

    public init() {}
}

/// How a run against a Hub ended.
public struct HubRunOutcome: Sendable {
    public var runID: String
    public var exitCode: Int32
    public var report: RunReport?
    public var failure: ScriptFailure?
    public var counts: RunCounts
    /// Plan mode: the plan the run produced.
    public var plan: Plan?
    /// Warnings to show (e.g. an apply that did not make every planned write).
    public var warnings: [String]
    /// Files the recipe exported, and where.
    public var exports: [ExportedFile]
    public var outputFolder: URL
    /// The run's redactor: masks what the run alone writes after it (its plan file).
    public var masking: SecretRedactor
}

/// Runs a prepared recipe against a Hub connection: gating, the journal, write
/// coordination, then the sandboxed run. Never throws for recipe problems: they are
/// in the outcome; throws `HubConfigError`/`HubGate.Denied`/`NotAllowed`/`PlanError`
/// when the run cannot start.
public enum HubRecipeRun {
    ///
    /// `onWatchdog` runs, on the watchdog's thread, if the deadline passed and the
    /// recipe could not be stopped (see `Watchdog`): with the outcome so far (the timeout
    /// failure, exit code 4, the counts and exports so far). The Lua thread is stuck then
    /// and the journal row stays `running`; the action reports and exits the process.
    ///
    /// One process at a time runs a run id: the run holds its lock (`Journal.runLocks`: a `RunLock` file, or the PostgreSQL journal's) from before the
    /// capability check to its end, and a second process is refused with
    /// `RunLock.Busy`. A resume (an existing run id) keeps the `--max-writes` and
    /// `--timeout` the journal recorded for the run unless the request gives its own.
    public static func execute(_ prepared: PreparedRecipe, request: HubRunRequest, connection: HubConnection,
                               journal: Journal, state: StateDirectory, output: any ScriptOutput,
                               onWatchdog: (@Sendable (HubRunOutcome) -> Void)? = nil,
                               configure: (inout RunConfiguration) -> Void = { _ in }) throws -> HubRunOutcome {
        // The run's redactor: every secret the run loads is registered there, and in the
        // process's (its parent), before anything can show it.
        let masking = SecretRedactor(parent: request.processRedactor)
        var request = request
        request.secrets = request.secrets.map { RegisteringSecrets($0, into: masking) }
        // The profile's API key is masked in all the run shows, wherever the profile
        // reads it from (a vault entry's value is registered when it is read).
        if let name = connection.apiKeyName {
            connection.client.withAPIKey { key in Array(key.utf8).withUnsafeBytes { masking.register($0, name: name) } }
        }
        // A library recipe must still be the file its pin names, and ask for no more
        // than its caller allows.
        try LibraryRecipe.checkPin(prepared.file, libraries: request.libraries)
        try request.allow?.check(needs: prepared.manifest.needs)
        // The secrets the manifest declares must be readable, as its needs must be
        // granted; reading them loads them into the redactor before anything is written.
        try SecretsGate.check(prepared.manifest.secrets, secrets: request.secrets)
        // So are the destinations it declares: each defined by the configuration, its
        // token readable (and so masked from now on).
        try TargetsGate.check(prepared.manifest.targets, targets: request.dispatchTargets, secrets: request.secrets,
                              masking: masking, profile: connection.profileName, isHubCredential: connection.client.holdsCredential)
        try TargetsGate.checkProfileDispatch(request.dispatch, needs: prepared.manifest.needs, secrets: request.secrets,
                                             masking: masking, profile: connection.profileName, isHubCredential: connection.client.holdsCredential)
        let sha = Digest.sha256Hex(prepared.file.source)
        // Absolute, so `runs resume` and `apply` find the recipe from any folder.
        let recipePath = AbsolutePath.of(prepared.file.path, resolvingParents: true)
        let params = ScriptValue.object(prepared.params.values)
        let (runID, mode, isNew) = try resolveRun(prepared, request: request, sha: sha, params: params, masking: masking,
                                                  profile: connection.profileName, journal: journal)
        if let held = request.heldLock, held.runID != runID {
            throw HubConfigError("internal error: the lock held is \(held.runID)'s, not \(runID)'s")
        }
        let lock = try request.heldLock ?? journal.runLocks(state: state).acquire(runID)
        defer { if request.heldLock == nil { lock.release() } }
        let existing = isNew ? nil : try journal.run(id: runID)
        if request.resumesOnlyUnfinished, case .run = request.mode, let existing, existing.status == .succeeded {
            throw NothingToResume(run: existing)
        }
        request.maxWrites = request.maxWrites ?? existing?.maxWrites
        request.timeout = request.timeout ?? existing?.timeoutSeconds
        // The one gate of every run, plan, apply, resume, job fire and trigger event.
        let gateNote = try HubGate.checkNeeds(prepared.manifest.needs, client: connection.client, profile: connection.profileName)

        if case .apply(let plan) = request.mode {
            try refuseIfAppliedInFull(plan, existing: existing, journal: journal)
            try verifyPlanStillHolds(plan, prepared, request: request, connection: connection, journal: journal, masking: masking)
        }
        let writeMode: WriteMode
        switch request.mode {
        case .run: writeMode = .live
        case .plan: writeMode = .plan
        case .apply(let plan): writeMode = .apply(plan)
        }
        let limits = [prepared.manifest.limits.writes, request.maxWrites].compactMap { $0 }
        let coordinator = WriteCoordinator(runID: runID, mode: writeMode, journal: journal, writeLimit: limits.min(),
                                           masking: masking)
        let outputFolderPath = try request.outputFolder?.path ?? (state.folderPath("runs") + "/" + runID)
        let outputFolder = request.outputFolder ?? URL(fileURLWithPath: outputFolderPath, isDirectory: true)
        let start = RunStart(id: runID, recipePath: recipePath, recipeSHA256: sha, paramsJSON: try JSONCodec.encode(params),
                             profile: connection.profileName, mode: mode, outputFolder: outputFolderPath,
                             maxWrites: request.maxWrites, timeoutSeconds: request.timeout)
        let started = try isNew ? journal.startNewRun(start, masking: masking.processWide)
            : journal.startRun(start, masking: masking.processWide)
        // The counts of the run's earlier passes (kept by the journal on a resume). A pass
        // that died stored none, but the journal counts its sends and the reads its writes
        // noted (and the totals it noted at most a second apart, below).
        let earlier = existing == nil ? RunCounts() : started.counts
        request.onStart(started)
        // What the run says is kept with it, within its bound; a resume goes on from its
        // earlier attempts' lines.
        let recorder = JournalledOutput(wrapping: output, journal: journal, runID: runID, attempt: started.attempts,
                                        totals: existing == nil ? RunOutputTotals() : try journal.outputTotals(runID: runID),
                                        masking: masking.processWide)
        let output: any ScriptOutput = recorder
        // The run's reads are recorded (not a plan's); a resume replays the earlier passes'.
        let recorded: RecordedReads
        if case .plan = writeMode {
            recorded = .disabled(runID: runID)
        } else {
            recorded = try RecordedReads(runID: runID, journal: journal, replaying: existing != nil,
                                         maxCount: request.maxRecordedReads, maxBytes: request.maxRecordedReadBytes)
            recorded.onRecordingStopped = { message in output.log(.warn, message, fields: [:]) }
        }
        let pass = Pass(prepared: prepared, request: request, runID: runID, client: connection.client,
                        coordinator: coordinator, output: output, outputFolder: outputFolder,
                        progress: request.progress ?? TerminalProgressReporter(),
                        state: (journal, StatePlugin.scope(recipe: prepared.manifest.name, profile: connection.profileName)),
                        recorded: recorded)
        // The run's reads so far go to the journal with each write and, while it only
        // reads, once a second: a pass killed with `kill -9` keeps its reads.
        coordinator.runReads = { [weak context = pass.context] in earlier.reads + (context?.reads ?? 0) }
        pass.context.onRead = { [weak context = pass.context] in
            guard let context else { return }
            try? journal.noteProgress(runID: runID, counts: earlier + RunCounts(reads: context.reads, writes: coordinator.counts))
        }
        let report = pass.run { configuration in
            configure(&configuration)
            if let onWatchdog {
                configuration.onWatchdog = { [context = pass.context, exports = pass.exports] report in
                    // A snapshot read while the Lua thread is stuck (that is when the
                    // watchdog fires), not a synchronised one.
                    let outcome = HubRunOutcome(
                        runID: runID, exitCode: report.exitCode, report: report, failure: report.failure,
                        counts: RunCounts(reads: context.reads, writes: context.writes.counts), plan: nil, warnings: [],
                        exports: exports.files, outputFolder: outputFolder, masking: masking)
                    recorder.close(outcome.closingOutput, within: 1)
                    onWatchdog(outcome)
                }
            }
        }
        var warnings: [String] = []
        if report.succeeded { warnings = coordinator.finish() }
        // A read-only run with a key of unknown permissions ran on the Hub's say-so: a
        // finished run says so (a refused read says it in its own error).
        if let gateNote, report.succeeded { warnings.append(gateNote) }
        // A pass that stopped keeps its reads since its last write for a resume.
        if !report.succeeded { try? recorded.flush() }
        var counts = RunCounts(reads: pass.context.reads, writes: coordinator.counts)
        counts.readsReplayed = recorded.replayedCount
        let status: RunStatus
        switch report.failure?.kind {
        case nil: status = .succeeded
        case .limit?: status = .stopped
        default: status = .failed
        }
        var failure = report.failure, exitCode = report.exitCode
        if let original = failure, let reread = request.rereadFailure?(original, runID, counts) {
            (failure, exitCode) = (reread.failure, reread.exitCode)
        }
        var plan: Plan?
        if case .plan = request.mode {
            plan = Plan(runID: runID, recipePath: recipePath, recipeSHA256: sha, profile: connection.profileName,
                        params: params, createdAt: Date(), writes: coordinator.planned, counts: counts)
        }
        let outcome = HubRunOutcome(runID: runID, exitCode: exitCode, report: report, failure: failure,
                                    counts: counts, plan: plan, warnings: warnings, exports: pass.exports.files,
                                    outputFolder: outputFolder, masking: masking)
        // Committed with the run's end: no commit of their own.
        recorder.close(outcome.closingOutput, withNextCommit: true)
        try journal.finishRun(id: runID, status: status, counts: earlier + counts, exitCode: Int(exitCode))
        // A run that succeeded has nothing to resume: its record of reads goes.
        if status == .succeeded, recorded.isEnabled { try? journal.dropRecordedReads(runID: runID) }
        return outcome
    }

    /// An apply of a plan whose every write the journal holds as done (a plan applied in
    /// full before) is answered with `PlanAlreadyApplied`, not re-checked against data
    /// it has itself changed. The keys are those the apply sent (`Plan.isApplied`): a
    /// write that used a created id was sent with the key of its real form.
    static func refuseIfAppliedInFull(_ plan: Plan, existing: RunRecord?, journal: Journal) throws {
        guard let existing, existing.mode == .apply, existing.status == .succeeded, !plan.writes.isEmpty else { return }
        var done: [String: ScriptValue] = [:]
        for record in try journal.writes(runID: plan.runID) where record.state == .done {
            done[record.key] = record.responseJSON.flatMap { try? JSONCodec.decode($0) } ?? .nilValue
        }
        guard plan.isApplied(done: done) else { return }
        throw PlanAlreadyApplied(runID: plan.runID, writes: plan.writes.count, finishedAt: existing.finishedAt)
    }

    static func sameWrite(_ a: PlannedWrite, _ b: PlannedWrite) -> Bool {
        a.key == b.key && a.method == b.method && a.path == b.path && a.bodySHA256 == b.bodySHA256 && a.creates == b.creates
    }

    /// Before an apply sends anything: runs the recipe once more in plan mode (quietly,
    /// with a scratch journal and output folder) and compares its writes with the plan.
    /// If the data changed so that the recipe would now write something else, the apply
    /// is refused before any write.
    static func verifyPlanStillHolds(_ plan: Plan, _ prepared: PreparedRecipe, request: HubRunRequest,
                                     connection: HubConnection, journal: Journal, masking: SecretRedactor) throws {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-verify-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let coordinator = WriteCoordinator(runID: plan.runID, mode: .plan, journal: try Journal.inMemory(), writeLimit: nil,
                                           masking: masking)
        // Checkpoints are read from the real journal (plan mode applies none).
        let pass = Pass(prepared: prepared, request: request, runID: plan.runID, client: connection.client,
                        coordinator: coordinator, output: MemoryOutput(), outputFolder: scratch,
                        progress: MemoryProgressReporter(),
                        state: (journal, StatePlugin.scope(recipe: prepared.manifest.name, profile: connection.profileName)))
        let report = pass.run(configure: { _ in })
        if let failure = report.failure {
            throw PlanRefusal("apply: checking the plan, the recipe failed before sending anything: \(failure.message)", cause: failure)
        }
        let now = coordinator.planned
        var differs: Int?
        for (index, (planned, wanted)) in zip(plan.writes, now).enumerated() where !sameWrite(planned, wanted) {
            differs = index
            break
        }
        if differs == nil && plan.writes.count != now.count { differs = min(plan.writes.count, now.count) }
        guard let index = differs else { return }
        func describe(_ w: PlannedWrite?) -> String { w.map { "\($0.method) \($0.path) (\($0.summary))" } ?? "nothing" }
        var message = """
            apply: the Hub's data changed since the plan was made; nothing was sent.
              write \(index + 1) in the plan: \(describe(index < plan.writes.count ? plan.writes[index] : nil))
              write \(index + 1) now:         \(describe(index < now.count ? now[index] : nil))
            (the plan has \(plan.writes.count) writes; the recipe would now make \(now.count))
            """
        let done = (try? journal.writes(runID: plan.runID).filter { $0.state == .done }.count) ?? 0
        message += done > 0
            ? "\nPart of this plan was already applied (\(done) writes); finish it with hubscript runs resume \(plan.runID)."
            : "\nMake a new plan with hubscript plan, review it, and apply that one."
        throw PlanRefusal(message)
    }

    /// The run id and journal mode: a new id, the plan's (apply), or an existing run to
    /// resume (refused if the recipe changed, unless forced, or if params or profile differ).
    /// `isNew`: the id was made here and the journal holds no run under it.
    static func resolveRun(_ prepared: PreparedRecipe, request: HubRunRequest, sha: String, params: ScriptValue, masking: SecretRedactor,
                           profile: String, journal: Journal) throws -> (id: String, mode: RunMode, isNew: Bool) {
        switch request.mode {
        case .plan:
            if let id = request.runID { return (id, .plan, false) }
            return (try journal.newRunID(), .plan, true)
        case .apply(let plan):
            try plan.check(recipeSHA256: sha, profile: profile, params: params)
            return (plan.runID, .apply, false)
        case .run:
            guard let id = request.runID else { return (try journal.newRunID(), .run, true) }
            guard let existing = try journal.run(id: id) else { return (id, .run, false) }
            if existing.recipeSHA256 != sha && !request.force {
                throw HubConfigError("""
                    run \(id) was started with another version of \(DisplayPath.relative(URL(fileURLWithPath: existing.recipePath))) \
                    (sha256 \(existing.recipeSHA256.prefix(12))…, now \(sha.prefix(12))…); resuming could repeat or skip \
                    changes. Pass --force to resume anyway, or start a new run.
                    """)
            }
            // The journal keeps params masked (a param may hold a loaded secret's value):
            // compare them masked, and show them masked.
            let paramsJSON = masking.processWide.redact((try? JSONCodec.encode(params)) ?? "")
            if existing.paramsJSON != paramsJSON {
                throw HubConfigError("run \(id) was started with params \(existing.paramsJSON), not \(paramsJSON); resume it with the same params (hubscript runs resume \(id) does)")
            }
            if existing.profile != profile {
                throw HubConfigError("run \(id) was started with profile '\(existing.profile)', not '\(profile)'; pass --profile \(existing.profile)")
            }
            return (id, .run, false)
        }
    }
}

/// An apply refused before any write (exit code 4: the plan is the run's limit).
public struct PlanRefusal: Error, Sendable, CustomStringConvertible {
    public let message: String
    /// The recipe's failure when checking the plan failed (a Hub out of reach, say).
    public var cause: ScriptFailure?
    init(_ message: String, cause: ScriptFailure? = nil) {
        self.message = message
        self.cause = cause
    }
    public var description: String { message }
}

/// An apply of a plan that was already applied in full: nothing to do (exit code 0).
public struct PlanAlreadyApplied: Error, Sendable, CustomStringConvertible {
    public let runID: String
    public let writes: Int
    public let finishedAt: Date?
    public var description: String {
        "apply: this plan was already applied in full (run \(runID), \(writes) writes\(finishedAt.map { ", finished \(UTCTime.iso8601($0))" } ?? "")); nothing was sent"
    }
}

/// One execution of the recipe: the plugins over a write coordinator, the sandboxed run.
struct Pass {
    let prepared: PreparedRecipe
    let request: HubRunRequest
    let runID: String
    let context: HubRunContext
    let exports: ExportSession
    let csv: CSVSession
    let progress: any ProgressReporter
    let output: any ScriptOutput
    /// Where `state.*` keeps the recipe's checkpoints, and under which scope.
    let state: (journal: Journal, scope: String)

    init(prepared: PreparedRecipe, request: HubRunRequest, runID: String, client: HubClient,
         coordinator: WriteCoordinator, output: any ScriptOutput, outputFolder: URL, progress: any ProgressReporter,
         state: (journal: Journal, scope: String), recorded: RecordedReads? = nil) {
        self.prepared = prepared
        self.state = state
        self.request = request
        self.runID = runID
        self.output = output
        self.progress = progress
        context = HubRunContext(client: client, writes: coordinator, recorded: recorded)
        context.progress = progress
        context.secretStore = request.secrets?.asStore
        context.onWrite = { intent, result in
            output.event("write", [
                "method": .string(intent.method), "path": .string(intent.path), "summary": .string(intent.summary),
                "key": .string(result.key), "replayed": .bool(result.replayed), "planned": .bool(result.planned),
            ])
        }
        context.onWriteFailed = { intent, error in
            var fields: [String: ScriptValue] = [
                "method": .string(intent.method), "path": .string(intent.path), "summary": .string(intent.summary),
                "message": .string("\(error)"),
            ]
            let hubError = (error as? RejectedWrite)?.error ?? (error as? HubError)
            if let hubError {
                fields["code"] = .string(hubError.code)
                fields["message"] = .string(hubError.message)
                if let status = hubError.status { fields["status"] = .integer(Int64(status)) }
            }
            output.event("write_failed", fields)
        }
        exports = ExportSession(folder: outputFolder, masking: coordinator.masking)
        // `vault:` exports go to the run's vault; a plan (and an apply's check of its
        // plan) writes nothing there.
        if case .plan = coordinator.mode {
            exports.vault = .discard
        } else if let vault = ((request.secrets as? RegisteringSecrets)?.resolver ?? request.secrets) as? VaultSecretResolver {
            exports.vault = .store(vault)
        }
        exports.hubPages = ExportStreamTally(output: output).counting { [context] id in try context.nextEncodedPage(id) }
        let fileParams = prepared.manifest.params.filter { $0.kind == .file }
            .compactMap { prepared.params.values[$0.name]?.stringValue }
        csv = CSVSession(allowedFiles: Set(fileParams))
    }

    func run(configure: (inout RunConfiguration) -> Void) -> RunReport {
        defer {
            exports.finish()
            csv.closeAll()
            (progress as? TerminalProgressReporter)?.endLine()
        }
        var configuration = RunConfiguration(output: output)
        configuration.limits = prepared.manifest.limits.applied(to: RunLimits())
        if let timeout = request.timeout { configuration.limits.timeoutSeconds = timeout }
        configuration.libraryFolders = request.libraryFolders
        configuration.libraries = request.libraries
        let environment = HubRunEnvironment(runID: runID, prepared: prepared, output: output, context: context,
                                            secrets: request.secrets)
        configuration.plugins = [
            JSONPlugin.make(), LogPlugin.make(output: output), ParamsPlugin.make(prepared.params.values), TimePlugin.make(),
            HubModule.make(context), ExportPlugin.make(session: exports), CSVPlugin.make(session: csv),
            ProgressPlugin.make(reporter: progress),
            StatePlugin.make(context: context, journal: state.journal, scope: state.scope),
            DispatchPlugin.make(environment, target: request.dispatch, targets: request.dispatchTargets),
            VaultPlugin.make(declared: prepared.manifest.secrets, secrets: request.secrets),
        ] + request.extraPlugins(environment)
        configuration.gate = HubGate.bindingGate(needs: prepared.manifest.needs)
        configure(&configuration)
        return ScriptRuntime.run(prepared.file, configuration: configuration)
    }
}
