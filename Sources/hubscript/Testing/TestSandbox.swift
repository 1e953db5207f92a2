import Foundation
import DispatchClient
import HTTPKit
import HubClient
import HubSandbox
import ScriptHost
import RunJournal
import Secrets
import RecipeModules
import Runs
import Synchronization

/// One `test.sandbox{…}`: a fresh in-memory built-in sandbox (Hub and Dispatch), its own
/// in-memory journal, and the runs made against it. Recipes run through the real
/// `HubRecipeRun` path, as `hubscript run` does, with the built-in sandbox profile.
final class TestSandbox: @unchecked Sendable {
    let hub: HubSandbox
    let dispatch: StoredDispatchSandbox
    let journal: Journal
    let connection: HubConnection
    let state: StateDirectory
    /// `kill_during_write`: armed for one run at a time.
    let kill = WriteKill()
    /// Plans made with `mode = "plan"`, by run id, for `mode = "apply"`.
    private let plans = Mutex<[String: Plan]>([:])

    /// The sandbox's vault: what bindings store (a new API key's secret), in memory.
    let secrets = MemorySecrets()

    /// `users`: how many users in all (at least the 3 fixed accounts); `auditEvents`:
    /// generated audit events besides the fixed history; `signIn`: the email of a
    /// sandbox user to run recipes as (signed in, MFA completed), else the jobs API key.
    /// The configuration's libraries: recipes run here `require` from them, as in a run.
    let libraries: [ModuleLibrary]

    init(users: Int, auditEvents: Int, fixtures: FixtureRows, state: StateDirectory, libraries: [ModuleLibrary] = [],
         signIn: String? = nil) throws {
        self.libraries = libraries
        hub = try HubSandbox(options: SandboxOptions(storage: .memory, scale: .init(users: max(3, users), auditEvents: auditEvents),
                                                     rateLimits: .off))
        if !fixtures.isEmpty { try hub.insert(fixtures) }
        dispatch = try StoredDispatchSandbox(storage: .memory)
        journal = try Journal.inMemory()
        self.state = state
        let hub = self.hub
        var bearer = SandboxFixtures.jobsKeySecret
        if let signIn { bearer = try Self.accessToken(hub, email: signIn) }
        connection = try HubConnection.open(config: .empty, profile: nil, state: state,
                                            embeddedHub: Opener(hub: hub, kill: kill, apiKeySecret: bearer), warn: { _ in })
    }

    /// Signs `email` in to `hub` (any password; MFA code 123456): its access token.
    static func accessToken(_ hub: HubSandbox, email: String) throws -> String {
        func post(_ path: String, _ body: ScriptValue) throws -> ScriptValue {
            let r = hub.handle(HTTPRequestMessage(method: "POST", target: path, headers: HTTPHeaders([("Substratal-Version", "1")]),
                                                  body: Data(try JSONCodec.encode(body).utf8)))
            let answer = try JSONCodec.decode(r.body)
            guard r.status == 200 else {
                throw ScriptMessageError("test.sandbox: cannot sign in as \(email): \(answer["error"]["message"].stringValue ?? "status \(r.status)")")
            }
            return answer
        }
        var answer = try post("/auth/login", ["email": .string(email), "password": "test"])
        if let mfa = answer["mfa_token"].stringValue {
            answer = try post("/auth/mfa/verify", ["mfa_token": .string(mfa), "code": .string(SandboxFixtures.mfaCode)])
        }
        guard let token = answer["access_token"].stringValue else { throw ScriptMessageError("test.sandbox: no access token for \(email)") }
        return token
    }

    /// Whether the secret stored as `name` authenticates against this sandbox (never the value).
    func secretWorks(_ name: String) throws -> Bool {
        guard let secret = try? secrets.value(of: name) else { return false }
        let r = hub.handle(HTTPRequestMessage(method: "GET", target: "/permissions",
                                              headers: HTTPHeaders([("Authorization", "Bearer \(secret)"), ("Substratal-Version", "1")]),
                                              body: Data()))
        return r.status == 200
    }

    struct Opener: EmbeddedHubOpener {
        let hub: HubSandbox
        let kill: WriteKill
        var apiKeyID: String { SandboxFixtures.jobsKeyId }
        let apiKeySecret: String
        func transport(state: StateDirectory) -> any HubTransport {
            KillableTransport(inner: InProcessTransport(handler: { [hub] in hub.handle($0) }), kill: kill)
        }
    }

    struct RunOptions {
        var mode = "run"
        var killAfterWrites: Int?
        /// The write (1 = the first the run sends) whose response is lost as the process dies.
        var killDuringWrite: Int?
        var planRunID: String?
        var resume: String?
    }

    /// `params` with each `file` parameter's path made relative to the test file, as
    /// the recipe's own path is, so a test reads its fixtures wherever `hubscript test`
    /// runs from — and confined by `paths` (the test's folder, or its library; a file
    /// parameter has no default). Unchanged if the manifest cannot be read (the run then
    /// reports why).
    /// - Throws: `ScriptMessageError` for a path that is absolute or leads out of `paths`.
    static func resolvingFileParams(_ params: [String: ScriptValue], recipe path: String,
                                    paths: TestPaths) throws -> [String: ScriptValue] {
        guard let manifest = try? RecipeManifest.load(from: RecipeFile(path: path)) else { return params }
        var resolved = params
        for spec in manifest.params where spec.kind == .file {
            if let value = params[spec.name]?.stringValue {
                resolved[spec.name] = .string(try paths.file(value, parameter: spec.name))
            }
        }
        return resolved
    }

    /// Runs `path` with `params`; the result as the test sees it (`s:run`, `s:resume`).
    func run(path: String, params: [String: ScriptValue], options: RunOptions) throws -> ScriptValue {
        let prepared: PreparedRecipe
        do { prepared = try PreparedRecipe(path: path, paramValues: params) } catch {
            return Self.setupFailure("\(error)", exitCode: 2)
        }
        if let problem = NeedsCheck.problem(in: prepared.file, manifest: prepared.manifest) {
            return Self.setupFailure(problem, exitCode: 2)
        }
        var request = HubRunRequest()
        switch options.mode {
        case "run": request.mode = .run
        case "plan": request.mode = .plan
        case "apply":
            guard let id = options.planRunID, let plan = plans.withLock({ $0[id] }) else {
                throw ScriptMessageError("s:run: mode \"apply\" needs plan = the result of a run with mode = \"plan\" in this sandbox")
            }
            request.mode = .apply(plan)
        default:
            throw ScriptMessageError("s:run: mode must be \"run\", \"plan\" or \"apply\", got \"\(options.mode)\"")
        }
        request.runID = options.resume
        request.libraries = libraries
        // A resume is not bounded by the stop that modelled the kill (the journal keeps it).
        if options.resume != nil { request.maxWrites = Int(Int32.max) }
        if let n = options.killAfterWrites { request.maxWrites = n }
        request.outputFolder = try state.folder("runs").appendingPathComponent(UUID().uuidString, isDirectory: true)
        request.progress = MemoryProgressReporter()
        request.secrets = secrets
        let dispatch = self.dispatch
        request.dispatch = DispatchTarget(profile: connection.profileName, endpoint: .sandbox(open: {
            ({ dispatch.handle($0) }, DispatchOptions.sandboxMachineToken)
        }))
        // Every target a recipe declares is this sandbox's Dispatch: a test never sends
        // anything out of the process.
        for target in prepared.manifest.targets {
            request.dispatchTargets[target] = DispatchTarget(profile: connection.profileName, endpoint: .sandbox(open: {
                ({ dispatch.handle($0) }, DispatchOptions.sandboxMachineToken)
            }), name: target)
        }
        let output = MemoryOutput()
        let outcome: HubRunOutcome
        kill.arm(options.killDuringWrite)
        defer { kill.arm(nil) }
        do {
            outcome = try HubRecipeRun.execute(prepared, request: request, connection: connection, journal: journal,
                                               state: state, output: output, configure: { [kill] configuration in
                configuration.gate = kill.gate(before: configuration.gate)
            })
        } catch let denied as HubGate.Denied {
            return Self.setupFailure(denied.description, exitCode: 3, code: denied.code)
        } catch let refusal as PlanRefusal {
            return Self.setupFailure(refusal.message, exitCode: 4)
        } catch {
            return Self.setupFailure("\(error)", exitCode: 2)
        }
        if let plan = outcome.plan { plans.withLock { $0[outcome.runID] = plan } }
        var result: [String: ScriptValue] = [
            "exit_code": .integer(Int64(outcome.exitCode)),
            "run_id": .string(outcome.runID),
            "output": .array(output.lines.map(ScriptValue.string)),
            "logs": .array(output.logs.map { .object(["level": .string($0.level.rawValue), "message": .string($0.message)]) }),
            "writes": .integer(Int64(outcome.counts.writes)),
            "replayed": .integer(Int64(outcome.counts.replayed)),
            "planned": .integer(Int64(outcome.counts.planned)),
            "reads": .integer(Int64(outcome.counts.reads)),
            "reads_replayed": .integer(Int64(outcome.counts.readsReplayed)),
            "exports": .array(outcome.exports.map { .object(["name": .string($0.name), "rows": .integer(Int64($0.rows))]) }),
        ]
        if let plan = outcome.plan {
            result["plan"] = .object([
                "run_id": .string(plan.runID),
                "writes": .array(plan.writes.map {
                    .object(["method": .string($0.method), "path": .string($0.path), "summary": .string($0.summary),
                             "key": .string($0.key)])
                }),
            ])
        }
        if let failure = outcome.failure {
            result["failure"] = Self.failure(failure)
            if options.killAfterWrites != nil, case .limit(.host) = failure.kind { result["killed"] = .bool(true) }
            if kill.hasKilled { result["killed"] = .bool(true) }
        }
        return .object(result)
    }

    static func failure(_ failure: ScriptFailure) -> ScriptValue {
        var fields: [String: ScriptValue] = [
            "kind": .string(RunReporter.kindName(failure.kind)), "message": .string(failure.message),
        ]
        if let code = failure.structured?["code"].stringValue { fields["code"] = .string(code) }
        if let location = failure.location { fields["location"] = .string(location) }
        return .object(fields)
    }

    /// A run that could not start: what `hubscript run` reports with `error` and its exit code.
    static func setupFailure(_ message: String, exitCode: Int32, code: String? = nil) -> ScriptValue {
        var failure: [String: ScriptValue] = ["kind": .string(exitCode == 4 ? "limit.host" : "host"), "message": .string(message)]
        if let code { failure["code"] = .string(code) }
        return .object(["exit_code": .integer(Int64(exitCode)), "output": .array([]), "writes": .integer(0),
                        "replayed": .integer(0), "planned": .integer(0), "failure": .object(failure)])
    }

    // MARK: Reads for assertions

    /// `GET path` as the sandbox's jobs key; the decoded body (or its `error`, as data).
    func get(_ path: String, query: [(String, String)] = []) throws -> ScriptValue {
        var target = path.hasPrefix("/") ? path : "/" + path
        if !query.isEmpty {
            var components = URLComponents()
            components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) }
            target += "?" + (components.percentEncodedQuery ?? "")
        }
        let request = HTTPRequestMessage(method: "GET", target: target,
                                         headers: HTTPHeaders([("Authorization", "Bearer \(SandboxFixtures.jobsKeySecret)"),
                                                                   ("Substratal-Version", "1")]),
                                         body: Data())
        let response = hub.handle(request)
        let body = response.body.isEmpty ? ScriptValue.null : try JSONCodec.decode(response.body)
        if response.status == 404 { return .nilValue }
        guard (200..<300).contains(response.status) else {
            throw ScriptMessageError("s:get \(target): the sandbox answered \(response.status): \(String(decoding: response.body, as: UTF8.self))")
        }
        return body
    }

    /// Every item of a list endpoint, following `page.next_cursor`.
    func list(_ path: String, query: [(String, String)]) throws -> ScriptValue {
        var items: [ScriptValue] = []
        var cursor: String?
        repeat {
            var q = query + [("limit", "100")]
            if let cursor { q.append(("cursor", cursor)) }
            let page = try get(path, query: q)
            guard case .array(let data) = page["data"] else {
                throw ScriptMessageError("s:list \(path): not a list endpoint (no data array in the answer)")
            }
            items += data
            cursor = page["page"]["next_cursor"].stringValue
        } while cursor != nil
        return .array(items)
    }

    /// Notifications the sandbox Dispatch accepted, oldest first (replays not repeated).
    func dispatchSent() throws -> ScriptValue {
        .array(try dispatch.sentNotifications().map {
            .object(["id": .string($0.id), "title": .string($0.title), "body": .string($0.body),
                     "key": $0.idempotencyKey.map(ScriptValue.string) ?? .null])
        })
    }
}
