import HubClient
import Foundation
import SystemText
import ScriptHost
import RunJournal
import RecipeModules
import Configuration
import Runs

/// What made a plan, for its record in the journal (`PlanRecording`).
struct PlanMaking {
    /// The recipe manifest's `needs`.
    let needs: [String]
    let connection: HubConnection
    let journal: Journal
}

/// The flow shared by run, plan, apply and runs resume: validate the recipe, connect,
/// run through the journal, report. Returns the exit code.
struct RecipeLauncher {
    let common: CommonOptions.Values
    let json: Bool
    var request = HubRunRequest()
    /// --quiet, --verbose, --no-progress.
    var chatter = OutputOptions.Values()
    /// `plan --detailed-exitcode`: a successful plan with writes exits with 5.
    var detailedExitCode = false
    /// How the journal is checked when it opens (nil: `.always` when the command names a
    /// run id — a resume, `run --run-id`, an apply — else `.unlessClosedCleanly`).
    var journalCheck: Journal.IntegrityCheck?
    /// Whether people get the run's closing `done:` line (`RunReporter.closingLine`).
    var closingLine = true
    /// Replaces the run's binding gate (`HubGate.bindingGate` over the manifest's needs)
    /// with one made for the connection: `hubscript eval` and `repl`, which have no
    /// manifest to declare needs (`ReplGate`).
    var bindingGate: ((HubConnection) -> @Sendable (ScriptFunction) throws -> Void)?
    /// A recipe the command made itself (eval, repl), run instead of reading `path`.
    var prepared: PreparedRecipe?

    /// `paramValues`: typed params (a journalled run's or a plan's), used instead of
    /// `params`/`paramsFile` when given.
    func launch(path: String, params: [(String, String)], paramsFile: String?,
                paramValues: [String: ScriptValue]? = nil,
                onPlan: (Plan, SecretRedactor, ConsoleOutput, PlanMaking) throws -> Void = { _, _, _, _ in }) -> Int32 {
        let progress = chatter.progressReporter()
        // Lines said while the progress line is drawn erase it first and draw it after.
        let output = ConsoleOutput(json: json, minimumLevel: chatter.logLevel, timestamps: true,
                                   terminalLine: progress.isEnabled ? progress : nil,
                                   printsShareTerminalLine: !json && isatty(1) == 1)
        let reporter = RunReporter(output: output, json: json, repeatedOptions: common.repeatedOptions, closingLine: closingLine)
        let prepared: PreparedRecipe
        do {
            if let made = self.prepared {
                prepared = made
            } else if let paramValues {
                prepared = try PreparedRecipe(path: path, paramValues: paramValues)
            } else {
                prepared = try PreparedRecipe(path: path, cliParams: params, paramsFile: paramsFile)
            }
        } catch {
            return reporter.reportSetupFailure(error, runID: request.runID)
        }
        if let problem = NeedsCheck.problem(in: prepared.file, manifest: prepared.manifest) {
            return reporter.reportSetupFailure(ManifestError(problem))
        }
        // A 401 or a Hub out of reach reads as the profile's problem, not the recipe's.
        let witness = HubReachWitness()
        func reach(_ profile: String?) -> HubReachContext {
            HubReachContext(common: common, profile: profile ?? (try? common.hub.profile(named: common.profile).name) ?? "sandbox",
                            witness: witness)
        }
        do {
            let connection = try common.connect(quiet: chatter.quiet, observe: witness.observer(
                then: chatter.clientObserver(progress: progress, events: json ? output : nil)))
            let journal = try common.openJournal(
                                                  check: journalCheck ?? (runIDKnownBeforeStart == nil ? .unlessClosedCleanly : .always))
            var request = self.request
            request.dispatch = try common.dispatchTarget(common.hub, profile: common.profile)
            request.dispatchTargets = try common.dispatchTargets(prepared.manifest.targets, common.hub, profile: common.profile)
            if request.secrets == nil { request.secrets = VaultAccess.resolver(state: common.state) }
            if request.progress == nil { request.progress = progress }
            let readAgain = reach(connection.profileName), mode = request.mode
            request.rereadFailure = { failure, runID, counts in readAgain.reread(failure, runID: runID, counts: counts, mode: mode) }
            // --quiet drops the start line (the closing line names the run too); --json
            // always starts with its `start` event.
            let announce = json || !chatter.quiet
            request.onStart = { if announce { reporter.reportStart($0) } }
            var outcome = try HubRecipeRun.execute(prepared, request: request, connection: connection, journal: journal,
                                                   state: common.state, output: output, onWatchdog: { outcome in
                // The Lua thread is stuck (in C, a finalizer, or a write to a full pipe);
                // end the process whatever happens to the report. The reporter's writes
                // are bounded (under a second); the backstop covers anything else.
                let backstop = Thread { Thread.sleep(forTimeInterval: 3); _exit(ExitCode.limit) }
                backstop.start()
                reporter.finishBeforeExit(outcome)
                _exit(ExitCode.limit)
            }, configure: { configuration in
                // This process ends with this run: the Lua state is left to its exit.
                configuration.leavesLuaStateToExit = true
                if let bindingGate { configuration.gate = bindingGate(connection) }
            })
            if let plan = outcome.plan, outcome.failure == nil {
                try onPlan(plan, outcome.masking, output, PlanMaking(needs: prepared.manifest.needs, connection: connection, journal: journal))
                if detailedExitCode && !plan.writes.isEmpty { outcome.exitCode = ExitCode.changesPlanned }
            }
            return reporter.finish(outcome)
        } catch let done as PlanAlreadyApplied {
            return reporter.reportAlreadyApplied(done)
        } catch let done as NothingToResume {
            return reporter.reportNothingToResume(done)
        } catch let refusal as PlanRefusal {
            // The check of the plan could not reach the Hub: say that, not "the recipe failed".
            if let cause = refusal.cause, let failure = reach(nil).failure(for: cause) {
                return reporter.reportSetupFailure(HubReachContext.scriptFailure(failure), exitCode: failure.exitCode,
                                                   runID: runIDKnownBeforeStart)
            }
            return reporter.reportSetupFailure(ScriptFailure(kind: .limit(.host), message: refusal.message),
                                               exitCode: RunExitCode.of(refusal), runID: runIDKnownBeforeStart)
        } catch let denied as HubGate.Denied {
            let structured = ScriptValue.object([
                "code": .string(denied.code), "profile": .string(denied.profile),
                "missing": .array(denied.missing.map(ScriptValue.string)),
            ])
            return reporter.reportSetupFailure(ScriptFailure(kind: .host, message: denied.description, structured: structured),
                                               exitCode: RunExitCode.of(denied), runID: runIDKnownBeforeStart)
        } catch let notAllowed as NotAllowed {
            return reporter.reportSetupFailure(ScriptFailure(kind: .host, message: notAllowed.description, structured: notAllowed.structured),
                                               exitCode: RunExitCode.of(notAllowed), runID: runIDKnownBeforeStart)
        } catch let pins as LibraryPinError {
            // The recipe's own library does not match its pins: exit 2; under --json an
            // `error` event with `code`, `lock`, `libraries` and `changes`.
            guard json else {
                return reporter.reportSetupFailure(ScriptFailure(kind: .host, message: pins.description), exitCode: RunExitCode.of(pins),
                                                   runID: runIDKnownBeforeStart)
            }
            output.event("error", JSONEvents.hostError(pins))
            output.event("summary", JSONEvents.summary(status: "failed", exitCode: RunExitCode.of(pins), runID: runIDKnownBeforeStart))
            return RunExitCode.of(pins)
        } catch let hubError as HubError where reach(nil).failure(for: hubError) != nil {
            // Before the recipe ran (the gate reading a user's Capabilities, say).
            let failure = reach(nil).failure(for: hubError)!
            return reporter.reportSetupFailure(HubReachContext.scriptFailure(failure), exitCode: failure.exitCode,
                                               runID: runIDKnownBeforeStart)
        } catch let busy as RunLock.Busy {
            return reporter.reportSetupFailure(ScriptFailure(kind: .host, message: busy.description), exitCode: RunExitCode.of(busy),
                                               runID: busy.runID)
        } catch {
            return reporter.reportSetupFailure(ScriptFailure(kind: .host, message: "\(error)"), exitCode: RunExitCode.of(error),
                                               runID: runIDKnownBeforeStart)
        }
    }

    /// The run id a command names before the run starts (`--run-id`, resume, apply).
    var runIDKnownBeforeStart: String? {
        if case .apply(let plan) = request.mode { return plan.runID }
        return request.runID
    }
}
