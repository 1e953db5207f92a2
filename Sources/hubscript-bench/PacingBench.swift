// The client side of scripts/bench-pacing: drives every rate-limit class at once
// against `hubscript sandbox serve` at standard limits and reports, per class, the
// requests per minute in steady state and the 429s.
//   hubscript-bench pacing URL SECONDS [WARMUP [DISPATCH_URL]]
//
// Workloads (one thread each, each as fast as the client's governor lets it):
//   key_ops   reads (GET /users) and entitlement grants, and user creation when the
//             Hub offers POST /users: the key's 100/min is the bottleneck of the
//             reads, the grant class's 20/min of the grants;
//   key_jobs  notification sends (POST /applications/app_hub/notifications) to users in
//             turn: the key's 100/min is the bottleneck (the send class allows 600);
//   session   token refreshes of one signed-in session: the refresh class's 30/min;
//   dispatch  Dispatch sends with the sandbox machine token (when DISPATCH_URL is given):
//             the token's 600/min.
import Dispatch
import DispatchClient
import Foundation
import Synchronization
import HTTPKit
import HubClient

enum PacingBench {
    /// One answer the client saw: when, from which workload and class, and its status.
    struct Answer {
        let at: Double
        let lane: String
        let status: Int
    }

    final class Log: Sendable {
        private let answers = Mutex<[Answer]>([])
        let start = ProcessInfo.processInfo.systemUptime

        func add(_ lane: String, _ status: Int) {
            let at = ProcessInfo.processInfo.systemUptime - start
            answers.withLock { $0.append(Answer(at: at, lane: lane, status: status)) }
        }
        var all: [Answer] { answers.withLock { $0 } }
    }

    /// The lane of an answered request: its rate class, or `read`.
    static func lane(_ method: String, _ path: String) -> String {
        RateClass.of(method: method, path: path)?.rawValue ?? "read"
    }

    static func client(_ url: URL, _ credential: HubCredential, key: String, log: Log) throws -> HubClient {
        var options = HubClientOptions(warn: { FileHandle.standardError.write(Data("warning: \($0)\n".utf8)) })
        options.rateLimitPerMinute = 100
        options.observe = { event in
            if case .answered(let method, let path, let status, _) = event { log.add("\(key)/\(lane(method, path))", status) }
        }
        return try HubClient(baseURL: url, credential: credential, transport: LiveTransport(), options: options)
    }

    /// The sandbox Dispatch's client with its own pacer; every answer goes to `log`.
    static func dispatchClient(_ url: URL, log: Log) throws -> DispatchClient {
        let http = LoopbackHTTPClient()
        let port = UInt16(url.port ?? 80)
        return try DispatchClient(baseURL: url, token: "dsp_test_machine_sandbox", transport: DispatchTransports.function { request, _ in
            let response = try http.perform(request, host: "127.0.0.1", port: port, timeout: 30)
            log.add("dispatch/send", response.status)
            return response
        })
    }

    static func run(_ url: URL, seconds: Double, warmup: Double, dispatch: URL?) throws {
        let log = Log()
        let ops = try client(url, .apiKey("satk_test_ops_sandbox_000000000000000000"), key: "key_ops", log: log)
        let jobs = try client(url, .apiKey("satk_test_jobs_sandbox_0000000000000000"), key: "key_jobs", log: log)
        let anonymous = try client(url, .none, key: "session", log: log)
        let deadline = log.start + seconds
        @Sendable func running() -> Bool { ProcessInfo.processInfo.systemUptime < deadline }

        // Set-up (before the clock matters much): the users to grant to and notify.
        var found: [String] = []
        var pages = jobs.paginate(path: "/users", query: [(name: "status", value: "active")], limit: 100).makeIterator()
        while found.count < 200, let page = try pages.nextPage() { found += page.compactMap { $0["id"]?.stringValue } }
        let users = found
        let firstToken = try signIn(anonymous)
        let apps = ["app_chat", "app_crm", "app_wiki", "app_tickets", "app_analytics", "app_invoicer"]
        let offersUserCreation = LockedFlag(true)
        let failures = LockedList()
        let run = UUID().uuidString.prefix(8).lowercased()

        let dispatcher = try dispatch.map { try dispatchClient($0, log: log) }
        var lanes: [@Sendable () -> Void] = [
            {   // reads on key_ops
                while running() { attempt(failures) { _ = try ops.get("/users", query: [(name: "limit", value: "1")]) } }
            },
            {   // grants on key_ops
                var n = 0
                while running() {
                    let user = users[n % users.count], app = apps[(n / users.count) % apps.count]
                    attempt(failures, allowing: ["entitlement_already_exists"]) {
                        _ = try ops.post("/users/\(user)/entitlements", body: ["application_id": .string(app), "source": "admin_grant"],
                                         idempotencyKey: "pacing-\(run)-grant-\(n)")
                    }
                    n += 1
                }
            },
            {   // user creation on key_ops, when the Hub has POST /users
                var n = 0
                while running() {
                    do {
                        _ = try ops.post("/users", body: ["email": .string("pacing-\(run)-\(n)@example.com"), "status": "active"],
                                         idempotencyKey: "pacing-\(run)-user-\(n)")
                    } catch let error as HubError where error.status == 404 || error.status == 405 {
                        offersUserCreation.set(false)
                        return
                    } catch {
                        failures.add("\(error)")
                    }
                    n += 1
                }
            },
            {   // notification sends on key_jobs
                var n = 0
                while running() {
                    attempt(failures) {
                        _ = try jobs.post("/applications/app_hub/notifications",
                                          body: ["user_id": .string(users[n % users.count]), "title": "Pacing", "body": "bench",
                                                 "category": "test.pacing"],
                                          idempotencyKey: "pacing-\(run)-send-\(n)")
                    }
                    n += 1
                }
            },
            {   // refreshes of one session
                var refreshToken = firstToken
                while running() {
                    attempt(failures) {
                        let r = try anonymous.send(HubRequest(.post, "/auth/token/refresh", body: ["refresh_token": .string(refreshToken)],
                                                              authenticated: false))
                        guard let next = r.json["refresh_token"]?.stringValue else { throw BenchError("refresh answered no refresh_token") }
                        refreshToken = next
                    }
                }
            },
        ]
        if let dispatcher {
            lanes.append {   // Dispatch sends
                var n = 0
                while running() {
                    attempt(failures) {
                        _ = try dispatcher.send(try DispatchNotification(title: "Pacing \(n)", body: "bench"),
                                                idempotencyKey: "pacing-\(run)-dispatch-\(n)")
                    }
                    n += 1
                }
            }
        }
        // A thread per lane (concurrentPerform would run only as many as there are cores).
        let done = DispatchGroup()
        for lane in lanes {
            done.enter()
            Thread.detachNewThread {
                lane()
                done.leave()
            }
        }
        done.wait()
        report(log.all, seconds: seconds, warmup: warmup, offersUserCreation: offersUserCreation.value,
               measuresDispatch: dispatch != nil, failures: failures.all)
    }

    /// Signs in as Ada (no MFA in the seed) and returns the refresh token.
    static func signIn(_ client: HubClient) throws -> String {
        let r = try client.send(HubRequest(.post, "/auth/login", body: ["email": "ada@example.com", "password": "bench"],
                                           authenticated: false))
        guard let token = r.json["refresh_token"]?.stringValue else { throw BenchError("login answered no refresh_token") }
        return token
    }

    static func attempt(_ failures: LockedList, allowing codes: Set<String> = [], _ body: () throws -> Void) {
        do { try body() } catch let error as HubError where codes.contains(error.code) {
        } catch {
            failures.add("\(error)")
        }
    }

    static func report(_ answers: [Answer], seconds: Double, warmup: Double, offersUserCreation: Bool, measuresDispatch: Bool,
                       failures: [String]) {
        struct Row { let name: String, lanes: [String], limit: Int, bottleneck: Bool }
        let rows = [
            Row(name: "key_ops: session or key (reads + grants + creations)", lanes: ["key_ops/"], limit: 100, bottleneck: true),
            Row(name: "key_ops: entitlement grants", lanes: ["key_ops/grant"], limit: 20, bottleneck: true),
            Row(name: "key_ops: user creation", lanes: ["key_ops/user_creation"], limit: 20, bottleneck: offersUserCreation),
            Row(name: "key_jobs: notification sends (the key's 100 binds)", lanes: ["key_jobs/"], limit: 100, bottleneck: true),
            Row(name: "session: token refresh", lanes: ["session/refresh"], limit: 30, bottleneck: true),
        ] + (measuresDispatch ? [Row(name: "dispatch: sends per machine token", lanes: ["dispatch/send"], limit: 600, bottleneck: true)] : [])
        let window = seconds - warmup
        print(String(format: "Pacing against hubscript sandbox serve (rate limits standard): %.0f s, steady state after %.0f s", seconds, warmup))
        print("  class                                                 limit/min  req/min (steady)  of limit  429s steady/total")
        var met = true
        for row in rows {
            let mine = answers.filter { a in row.lanes.contains { a.lane.hasPrefix($0) } }
            if row.name.hasSuffix("user creation"), !offersUserCreation {
                print("  \(row.name.padding(toLength: 54, withPad: " ", startingAt: 0)) not measured: this sandbox has no POST /users")
                continue
            }
            let steady = mine.filter { $0.at >= warmup && $0.status != 429 }.count
            let rate = Double(steady) / window * 60
            let share = rate / Double(row.limit) * 100
            let limitedSteady = mine.filter { $0.at >= warmup && $0.status == 429 }.count
            let limitedAll = mine.filter { $0.status == 429 }.count
            let ok = limitedSteady == 0 && share >= 95
            met = met && ok
            print("  \(row.name.padding(toLength: 54, withPad: " ", startingAt: 0)) \(String(format: "%9d  %16.1f  %7.1f %%  %6d / %d", row.limit, rate, share, limitedSteady, limitedAll))\(ok ? "" : "  <- MISSED")")
        }
        if !failures.isEmpty {
            print("  \(failures.count) calls failed; the first: \(failures[0])")
            met = false
        }
        print("target: 0 × 429 in steady state and >= 95 % of each bottleneck's limit -> \(met ? "met" : "MISSED")")
    }

    struct BenchError: Error, CustomStringConvertible {
        let description: String
        init(_ d: String) { description = d }
    }

    final class LockedFlag: Sendable {
        private let flag: Mutex<Bool>
        init(_ v: Bool) { flag = Mutex(v) }
        var value: Bool { flag.withLock { $0 } }
        func set(_ new: Bool) { flag.withLock { $0 = new } }
    }

    final class LockedList: Sendable {
        private let items = Mutex<[String]>([])
        var all: [String] { items.withLock { $0 } }
        func add(_ s: String) { items.withLock { $0.append(s) } }
    }
}
