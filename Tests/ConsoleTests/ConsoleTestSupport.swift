import Foundation
import XCTest
import Configuration
import HTTPKit
import HubClient
import HubSandbox
import RunJournal
import Scheduler
@testable import Console

/// Run locks a test sets by hand: the runs it names are held (running), the rest free.
final class StubLocks: RunLocks, @unchecked Sendable {
    private let lock = NSLock()
    private var held: Set<String> = []
    init(held: Set<String> = []) { self.held = held }
    func hold(_ id: String) { lock.withLock { _ = held.insert(id) } }
    func release(_ id: String) { lock.withLock { _ = held.remove(id) } }
    func acquire(_ runID: String) throws -> any HeldRunLock { fatalError("not used by the console") }
    func isHeld(_ runID: String) -> Bool { lock.withLock { held.contains(runID) } }
}

/// Actions over an in-process sandbox Hub; fires are only counted.
final class StubActions: ConsoleActions, @unchecked Sendable {
    let sandbox: HubSandbox
    let needs: [String]
    private let lock = NSLock()
    private(set) var fired: [(job: String, person: String)] = []

    init(needs: [String] = ["users.manage"]) throws {
        sandbox = try HubSandbox(options: SandboxOptions(rateLimits: .off))
        self.needs = needs
    }

    func signInClient() throws -> HubClient {
        let sandbox = self.sandbox
        return try HubClient(baseURL: URL(string: "https://sandbox.hub.test")!,
                             credential: .session(profile: "console", store: InMemoryCredentialStore()),
                             transport: InProcessTransport(handler: { sandbox.handle($0) }),
                             options: HubClientOptions(rateLimitPerMinute: 0, profileName: "console"))
    }

    func permissionsToFire(job: String) throws -> [String] { needs }

    func fireNow(job: String, by person: String) throws -> FireNowResult {
        lock.withLock { fired.append((job, person)) }
        return .started(runID: "\(job)@manual-2026-11-30T14:22:33Z")
    }

    var fireCount: Int { lock.withLock { fired.count } }
}

/// A console over a journal, with its access token, as a browser meets it.
struct ConsoleFixture {
    let journal: Journal
    let locks: StubLocks
    let server: ConsoleServer
    let actions: StubActions?
    static let token = String(repeating: "7e", count: 32)

    init(journal: Journal? = nil, actions: StubActions? = nil, jobs: [ConfiguredJob] = [], triggers: [ConfiguredTrigger] = [],
         liveWait: Double = 5, approvals: ApprovalsConfig = .none) throws {
        let journal = try journal ?? Journal.inMemory(clock: { Date(timeIntervalSince1970: 1_796_048_553) })
        self.journal = journal
        locks = StubLocks()
        self.actions = actions
        var context = ConsoleContext(journal: journal, locks: locks, jobs: JobsConfig(source: nil, jobs: jobs),
                                     triggers: TriggersConfig(source: nil, triggers: triggers), actions: actions,
                                     clock: { Date(timeIntervalSince1970: 1_796_048_553) })
        context.livePollInterval = 0.02
        context.liveWait = liveWait
        context.approvals = approvals
        server = ConsoleServer(context: context, access: ConsoleAccess(token: Self.token, port: 8470))
    }

    static func job(_ name: String = "nightly") throws -> ConfiguredJob {
        ConfiguredJob(definition: try JobDefinition(name: name, recipe: "recipes/sync.lua",
                                                    schedule: try CronSchedule("0 3 * * *", timeZone: "Europe/Paris")),
                      recipe: URL(fileURLWithPath: "/srv/recipes/sync.lua"))
    }

    func get(_ target: String, cookie: String? = nil, headers: [(String, String)] = []) -> HTTPResponseMessage {
        var fields = HTTPHeaders([("Host", "127.0.0.1:8470")] + headers)
        if let cookie { fields.add("Cookie", "hubscript_console_8470=\(cookie)") }
        return server.handle(HTTPRequestMessage(method: "GET", target: target, headers: fields))
    }

    /// A POST as the console's own form sends it (same origin), unless `headers` says otherwise.
    func post(_ target: String, cookie: String?, form: [(String, String)],
              headers: [(String, String)] = [("Origin", "http://127.0.0.1:8470"), ("Sec-Fetch-Site", "same-origin")]) -> HTTPResponseMessage {
        var fields = HTTPHeaders([("Host", "127.0.0.1:8470"), ("Content-Type", "application/x-www-form-urlencoded")] + headers)
        if let cookie { fields.add("Cookie", "hubscript_console_8470=\(cookie)") }
        let body = form.map { URLText.component($0.0) + "=" + URLText.component($0.1) }.joined(separator: "&")
        return server.handle(HTTPRequestMessage(method: "POST", target: target, headers: fields, body: Data(body.utf8)))
    }

    /// Presents the token and returns the session cookie the console set.
    func signInWithToken() throws -> String {
        let response = get("/?token=\(Self.token)")
        XCTAssertEqual(response.status, 303)
        return try XCTUnwrap(Self.cookie(response))
    }

    static func cookie(_ response: HTTPResponseMessage) -> String? {
        guard let field = response.headers["Set-Cookie"], let eq = field.firstIndex(of: "="),
              let semi = field.firstIndex(of: ";") else { return nil }
        return String(field[field.index(after: eq)..<semi])
    }

    /// The CSRF token in a page's forms.
    static func csrf(_ response: HTTPResponseMessage) -> String? {
        let page = text(response)
        guard let range = page.range(of: "name=\"csrf\" value=\"") else { return nil }
        return String(page[range.upperBound...].prefix(64))
    }

    static func text(_ response: HTTPResponseMessage) -> String { String(decoding: response.body, as: UTF8.self) }
}
