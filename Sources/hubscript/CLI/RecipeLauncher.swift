import Foundation
import HubBindings
import ScriptHost

/// The flow shared by run, plan, apply and runs resume: validate the recipe, connect,
/// run through the journal, report. Returns the exit code.
struct RecipeLauncher {
    let common: CommonOptions.Values
    let json: Bool
    var request = HubRunRequest()
    /// --quiet, --verbose, --no-progress.
    var chatter = OutputOptions.Values()

    func launch(path: String, params: [(String, String)], paramsFile: String?,
                onPlan: (Plan, ConsoleOutput) throws -> Void = { _, _ in }) -> Int32 {
        let output = ConsoleOutput(json: json, minimumLevel: chatter.logLevel)
        let progress = chatter.progressReporter()
        let reporter = RunReporter(output: output, json: json)
        let prepared: PreparedRecipe
        do { prepared = try PreparedRecipe(path: path, cliParams: params, paramsFile: paramsFile) } catch {
            return reporter.reportSetupFailure(error)
        }
        if let problem = NeedsCheck.problem(in: prepared.file, manifest: prepared.manifest) {
            return reporter.reportSetupFailure(ManifestError(problem))
        }
        do {
            let connection = try common.connect(quiet: chatter.quiet, observe: chatter.clientObserver(progress: progress))
            let journal = try Journal(path: try common.state.journalFile.path)
            var request = self.request
            if request.progress == nil { request.progress = progress }
            if ProcessInfo.processInfo.environment["HUBSCRIPT_BENCH_PLUGIN"] == "1" {
                let extra = request.extraPlugins
                request.extraPlugins = { extra($0) + [BenchPlugin.make()] }
            }
            let outcome = try HubRecipeRun.execute(prepared, request: request, connection: connection, journal: journal,
                                                   state: common.state, output: output, onWatchdog: { outcome in
                // The Lua thread is stuck (in C, a finalizer, or a write to a full pipe);
                // end the process whatever happens to the report. The reporter's writes
                // are bounded (under a second); the backstop covers anything else.
                let backstop = Thread { Thread.sleep(forTimeInterval: 3); _exit(ExitCode.limit) }
                backstop.start()
                reporter.finishBeforeExit(outcome)
                _exit(ExitCode.limit)
            })
            if let plan = outcome.plan, outcome.failure == nil { try onPlan(plan, output) }
            return reporter.finish(outcome)
        } catch let refusal as PlanRefusal {
            return reporter.reportSetupFailure(ScriptFailure(kind: .limit(.host), message: refusal.message))
        } catch let denied as HubGate.Denied {
            return reporter.reportSetupFailure(ScriptFailure(kind: .host, message: denied.description), exitCode: ExitCode.capabilityDenied)
        } catch {
            return reporter.reportSetupFailure(ScriptFailure(kind: .host, message: "\(error)"))
        }
    }
}
