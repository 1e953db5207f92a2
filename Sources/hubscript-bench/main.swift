// Drives hubscript's Hub client for scripts/bench-client: N paginated reads and M
// keyed entitlement grants against a served sandbox, printing seconds per phase.
//   hubscript-bench URL READS WRITES [CONCURRENCY]
//   hubscript-bench pacing URL SECONDS [WARMUP [DISPATCH_URL]]   (scripts/bench-pacing; PacingBench.swift)
//   hubscript-bench listen PORT SECRET TRICKLERS ADDRESSES SECONDS (scripts/bench-listen; ListenBench.swift)
//   hubscript-bench calls FILE   (scripts/bench-runtime: FILE run with the `bench` module; CallsBench.swift)
// The Python peer (scripts/bench/client.py) does exactly the same requests.
import Dispatch
import Foundation
import HubClient

let args = CommandLine.arguments
if args.count == 3, args[1] == "calls" {
    exit(CallsBench.run(args[2]))
}
if args.count >= 4, args[1] == "pacing", let url = URL(string: args[2]), let seconds = Double(args[3]) {
    // scripts/bench-pacing: hubscript-bench pacing URL SECONDS [WARMUP]
    try PacingBench.run(url, seconds: seconds, warmup: args.count > 4 ? Double(args[4]) ?? 30 : 30,
                        dispatch: args.count > 5 ? URL(string: args[5]) : nil)
    exit(0)
}
if args.count == 7, args[1] == "listen", let port = UInt16(args[2]), let tricklers = Int(args[4]),
   let addresses = Int(args[5]), let seconds = Double(args[6]) {
    ListenBench.run(port: port, secret: args[3], tricklers: tricklers, addresses: addresses, seconds: seconds)
    exit(0)
}
guard args.count >= 4, let url = URL(string: args[1]), let reads = Int(args[2]), let writes = Int(args[3]) else {
    FileHandle.standardError.write(Data("usage: hubscript-bench URL READS WRITES [CONCURRENCY]\n".utf8))
    exit(2)
}
let concurrency = args.count > 4 ? Int(args[4]) ?? 1 : 1
let urlSessionOnly = ProcessInfo.processInfo.environment["BENCH_URLSESSION"] == "1"
var options = HubClientOptions()
options.rateLimitPerMinute = 0
let client = try HubClient(baseURL: url, credential: .apiKey("satk_test_jobs_sandbox_0000000000000000"),
                           transport: LiveTransport(loopbackFastPath: !urlSessionOnly), options: options)

func now() -> Double { ProcessInfo.processInfo.systemUptime }

enum Reads {
    /// `count` page reads of /audit-events (limit 25), following cursors and starting over at the end.
    @Sendable static func pages(_ count: Int, _ client: HubClient) throws {
        var done = 0
        while done < count {
            var pages = client.paginate(path: "/audit-events", limit: 25).makeIterator()
            while done < count, try pages.nextPage() != nil { done += 1 }
        }
    }
}

// The users to grant to (not timed): the first WRITES users by id.
var userIDs: [String] = []
var users = client.paginate(path: "/users", query: [(name: "status", value: "active")], limit: 100).makeIterator()
while userIDs.count < writes, let page = try users.nextPage() {
    userIDs += page.compactMap { $0["id"]?.stringValue }
}
userIDs = Array(userIDs.prefix(writes))

var t0 = now()
if concurrency <= 1 {
    try Reads.pages(reads, client)
} else {
    let perThread = reads / concurrency
    let shared = client
    DispatchQueue.concurrentPerform(iterations: concurrency) { _ in try? Reads.pages(perThread, shared) }
}
let readSeconds = now() - t0

t0 = now()
for (n, id) in userIDs.enumerated() {
    do {
        _ = try client.post("/users/\(id)/entitlements", body: ["application_id": "app_chat", "source": "admin_grant"],
                            idempotencyKey: "bench-grant-\(n)")
    } catch let error as HubError where error.code == "entitlement_already_exists" {
        // already held: still one round trip
    }
}
let writeSeconds = now() - t0
print(String(format: "%.4f %.4f %d", readSeconds, writeSeconds, userIDs.count))
