import Foundation
import HubClient
import ScriptHost
import RunJournal
import Configuration
import Automation
import Console

/// What the console's actions do in this program: sign-in against the profile's Hub
/// (the built-in sandbox or a real one) with a session kept in memory, and a job fired
/// as `hubscript jobs run` fires it (its run in this process, in the background).
final class ConsoleCLIActions: ConsoleActions, @unchecked Sendable {
    let config: LoadedConfiguration
    let common: CommonOptions.Values
    let journal: Journal
    /// The scheduler fires go through (nil when the configuration has no jobs).
    private let scheduler: JobScheduler?
    private let running = DispatchGroup()

    init(config: LoadedConfiguration, common: CommonOptions.Values, journal: Journal) {
        self.config = config
        self.common = common
        self.journal = journal
        guard !config.jobs.jobs.isEmpty else {
            scheduler = nil
            return
        }
        let scheduler = JobScheduler(jobs: config.jobs, journal: journal, state: common.state,
                                     executor: RecipeFireExecutor(common: common, journal: journal),
                                     notifier: DispatchFailureNotifier(common: common), clock: { Date() })
        scheduler.onRecord = { Console.out(FireText.line($0)) }
        self.scheduler = scheduler
    }

    func signInClient() throws -> HubClient {
        let (name, setting) = try config.hub.profile(named: common.profile)
        switch setting {
        case .sandbox:
            return try HubClient(baseURL: URL(string: "http://localhost")!,
                                 credential: .session(profile: "console", store: InMemoryCredentialStore()),
                                 transport: EmbeddedSandbox().transport(state: common.state),
                                 options: HubClientOptions(rateLimitPerMinute: 0, profileName: name))
        case .hub(var profile):
            profile.auth = .session(email: "")
            let trust = try TLSTrust.resolve(profile: name, caFile: profile.caFile)
            return try HubClient(profile: profile, credentialStore: InMemoryCredentialStore(), transport: LiveTransport(trust: trust))
        }
    }

    func permissionsToFire(job name: String) throws -> [String] {
        let job = try config.jobs.job(named: name)
        let libraries = try config.libraries(state: common.state)
        let path = try job.library.map { try LibraryRecipe.file($0, in: libraries).path } ?? job.recipe.path
        let prepared = try PreparedRecipe(path: path, cliParams: RecipeFireExecutor.cliParams(job.definition.params))
        return prepared.manifest.needs
    }

    func fireNow(job name: String, by person: String) throws -> FireNowResult {
        guard let scheduler else { throw HubConfigError("the configuration has no jobs") }
        let due = scheduler.manualFire(try config.jobs.job(named: name))
        guard let claim = try scheduler.claim(due) else {
            let reason = try journal.fires(runID: due.runID).last?.reason ?? "not run"
            Console.err("console: \(TerminalText.field(person)) fired \(TerminalText.field(name)): skipped (\(TerminalText.line(reason)))\n")
            return .skipped(runID: due.runID, reason: reason)
        }
        Console.err("console: \(TerminalText.field(person)) fired \(TerminalText.field(name)): \(TerminalText.field(due.runID))\n")
        running.enter()
        let thread = Thread { [running] in
            defer { running.leave() }
            do { try scheduler.execute(claim) } catch {
                Console.err("console: \(TerminalText.field(due.runID)): \(TerminalText.text("\(error)"))\n")
            }
        }
        thread.name = "console.fire"
        thread.start()
        return .started(runID: due.runID)
    }

    /// Waits for the fires this console started.
    func waitForFires() { running.wait() }
}
