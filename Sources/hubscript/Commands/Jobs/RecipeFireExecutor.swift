import Foundation
import HubClient
import Scheduler
import ScriptHost
import RunJournal
import RecipeModules
import Configuration
import Runs
import Automation
import Telemetry

/// Runs a fire's recipe as `hubscript run RECIPE --run-id JOB@TIME` would: the job's
/// params and profile, its `timeout` and `allow`, the configuration's libraries (pins
/// checked), every write journalled under the fire's run id
/// (so a second scheduler, a catch-up or a resume derive the same idempotency keys).
/// Every fire uses the configuration the command read at its start (`common`).
/// The recipe's prints go to stdout and its logs and errors to stderr, as in a run.
struct RecipeFireExecutor: FireExecutor {
    let common: CommonOptions.Values
    let journal: Journal
    /// Counts each fire's run and its Hub traffic (`jobs serve`'s `/metrics`), if set.
    var telemetry: ServeTelemetry?

    func execute(_ fire: FireLaunch) -> FireResult {
        let output = ConsoleOutput(json: false)
        let started = Date()
        let result = run(fire, output: output)
        telemetry?.metrics.recordRun(kind: "job", exitCode: result.exitCode, seconds: Date().timeIntervalSince(started),
                                     resumed: fire.resuming)
        if let message = result.message {
            output.writeStderr("\(TerminalText.field(fire.runID)): error: \(TerminalText.text(message))\n")
        }
        return result
    }

    private func run(_ fire: FireLaunch, output: ConsoleOutput) -> FireResult {
        let job = fire.job.definition
        let prepared: PreparedRecipe
        let libraries: [ModuleLibrary]
        do {
            // The configuration's libraries, checked against hubscript.lock at each fire
            // (a library changed since it was trusted stops the fire); a `LIB:RECIPE`
            // job's recipe is found among them.
            libraries = try common.configuration.libraries(state: common.state)
            let path = try fire.job.library.map { try LibraryRecipe.file($0, in: libraries).path } ?? fire.job.recipe.path
            prepared = try PreparedRecipe(path: path, cliParams: Self.cliParams(job.params))
        } catch {
            return FireResult(stoppedBy: error)
        }
        if let problem = NeedsCheck.problem(in: prepared.file, manifest: prepared.manifest) {
            return FireResult(exitCode: ExitCode.usage, message: problem)
        }
        do {
            // A 401 or a Hub out of reach is the profile's failure, as for `hubscript run`.
            let witness = HubReachWitness()
            let connection = try VaultAccess.connect(config: common.hub, profile: job.profile ?? common.profile, state: common.state,
                                                     quiet: true, observe: witness.observer(then: telemetry?.hubObserver))
            var request = HubRunRequest()
            let reach = HubReachContext(common: common, profile: connection.profileName, witness: witness)
            request.rereadFailure = { failure, runID, counts in reach.reread(failure, runID: runID, counts: counts, mode: .run) }
            request.libraries = libraries
            request.allow = job.allow.map { AllowedPermissions($0, caller: "job \"\(job.name)\"") }
            request.runID = fire.runID
            request.heldLock = fire.lock
            request.timeout = job.timeout.map(Double.init)
            request.progress = MemoryProgressReporter()
            request.secrets = VaultAccess.resolver(state: common.state)
            request.dispatch = try common.dispatchTarget(common.hub, profile: job.profile ?? common.profile)
            request.dispatchTargets = try common.dispatchTargets(prepared.manifest.targets, common.hub, profile: job.profile ?? common.profile)
            let (runID, row, journal) = (fire.runID, fire.row, journal)
            let outcome = try HubRecipeRun.execute(prepared, request: request, connection: connection, journal: journal,
                                                   state: common.state, output: output, onWatchdog: { _ in
                // The recipe is stuck past its deadline (in C or a finalizer): as `hubscript
                // run` does, end the process, with the fire recorded failed (not resumed).
                let message = "the recipe did not stop at its deadline; hubscript exits (code 4)"
                _ = try? journal.updateFire(id: row, FireChange(status: .failed, reason: message, exitCode: Int(ExitCode.limit)))
                Console.err("\(runID): \(message)\n")
                _exit(ExitCode.limit)
            })
            telemetry?.metrics.recordCounts(outcome.counts)
            return FireResult(outcome)
        } catch {
            return FireResult(stoppedBy: error)
        }
    }

    /// The job's params as `--param name=value` pairs (a list: one pair per item).
    static func cliParams(_ params: [String: JobParam]) -> [(String, String)] {
        params.sorted { $0.key < $1.key }.flatMap { name, value -> [(String, String)] in
            switch value {
            case .string(let text): [(name, text)]
            case .list(let items): items.isEmpty ? [(name, "")] : items.map { (name, $0) }
            }
        }
    }
}
