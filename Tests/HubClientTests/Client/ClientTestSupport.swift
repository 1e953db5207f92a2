import Foundation
import HTTPKit
import Testing
@testable import HubClient

/// The two transports every pipeline rule is tested over.
enum TransportKind: String, CaseIterable, Sendable, CustomTestStringConvertible {
    case inProcess, live
    var testDescription: String { rawValue }
}

/// A clock whose `sleep` advances virtual time at once and records the wait.
final class FakeClock: HubClock, @unchecked Sendable {
    private let lock = NSLock()
    private var current: TimeInterval = 1_000
    private var recorded: [TimeInterval] = []
    private let advancesOnSleep: Bool

    /// `advancesOnSleep: false` freezes time (sleeps are only recorded).
    init(advancesOnSleep: Bool = true) { self.advancesOnSleep = advancesOnSleep }

    func now() -> TimeInterval { lock.withLock { current } }
    func sleep(_ seconds: TimeInterval) {
        lock.withLock {
            recorded.append(seconds)
            if seconds > 0, advancesOnSleep { current += seconds }
        }
    }
    func advance(_ seconds: TimeInterval) { lock.withLock { current += seconds } }
    /// Every wait asked for, zero waits included.
    var sleeps: [TimeInterval] { lock.withLock { recorded } }
    /// The waits longer than zero.
    var realSleeps: [TimeInterval] { sleeps.filter { $0 > 0 } }
}

/// Always the same "random" number.
struct FixedRandom: HubRandomSource {
    var value: Double = 0.5
    func nextUnit() -> Double { value }
}

/// Collects warnings.
final class WarningSink: @unchecked Sendable {
    private let lock = NSLock()
    private var items: [String] = []
    var warnings: [String] { lock.withLock { items } }
    var sink: @Sendable (String) -> Void { { text in self.lock.withLock { self.items.append(text) } } }
}

/// A scripted Hub: answers with a closure given the request and its 0-based index,
/// and records every request it saw.
final class ScriptedHub: @unchecked Sendable {
    typealias Script = @Sendable (HTTPRequestMessage, Int) -> HTTPResponseMessage
    private let lock = NSLock()
    private var seen: [HTTPRequestMessage] = []
    private let script: Script

    init(_ script: @escaping Script) { self.script = script }

    func handle(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        let index = lock.withLock { () -> Int in
            seen.append(request)
            return seen.count - 1
        }
        return script(request, index)
    }

    var requests: [HTTPRequestMessage] { lock.withLock { seen } }
    func requests(_ method: String, _ path: String) -> [HTTPRequestMessage] {
        requests.filter { $0.method == method && $0.path == path }
    }
}

/// A client wired to a scripted Hub over one transport, with a fake clock.
final class Harness: @unchecked Sendable {
    let hub: ScriptedHub
    let client: HubClient
    let clock: FakeClock
    let warnings = WarningSink()
    let server: HTTPServer?

    init(_ kind: TransportKind, credential: HubCredential = .apiKey("test_harness_bearer"),
         configure: (inout HubClientOptions) -> Void = { _ in },
         _ script: @escaping ScriptedHub.Script) throws {
        hub = ScriptedHub(script)
        clock = FakeClock()
        var options = HubClientOptions(rateLimitPerMinute: 0, clock: clock, random: FixedRandom(), warn: warnings.sink,
                                       profileName: "test")
        configure(&options)
        let transport: any HubTransport
        let baseURL: URL
        switch kind {
        case .inProcess:
            server = nil
            transport = InProcessTransport(handler: hub.handle)
            baseURL = URL(string: "https://hub.test")!
        case .live:
            let hub = self.hub
            let server = try HTTPServer(host: "127.0.0.1", port: 0) { hub.handle($0) }
            server.start()
            self.server = server
            transport = LiveTransport()
            baseURL = URL(string: "http://127.0.0.1:\(server.port)")!
        }
        client = try HubClient(baseURL: baseURL, credential: credential, transport: transport, options: options)
    }

    deinit { server?.stop() }

    var requests: [HTTPRequestMessage] { hub.requests }
}

func jsonResponse(_ body: HubJSON, status: Int = 200, headers: [(String, String)] = []) -> HTTPResponseMessage {
    var h = HTTPHeaders([("Content-Type", "application/json")])
    for (name, value) in headers { h.add(name, value) }
    return HTTPResponseMessage(status: status, headers: h, body: body.encoded())
}

func errorResponse(_ status: Int, _ code: String, details: HubJSON? = nil, headers: [(String, String)] = []) -> HTTPResponseMessage {
    var error: [String: HubJSON] = ["code": .string(code), "message": .string("scripted \(code)")]
    if let details { error["details"] = details }
    return jsonResponse(["error": .object(error)], status: status, headers: headers)
}

func emptyResponse(_ status: Int = 204, headers: [(String, String)] = []) -> HTTPResponseMessage {
    HTTPResponseMessage(status: status, headers: HTTPHeaders(headers))
}

/// Runs `body` and returns the `HubError` it threw; records an issue if it threw
/// something else or nothing.
func hubError(_ body: () throws -> Any, sourceLocation: SourceLocation = #_sourceLocation) -> HubError? {
    do {
        _ = try body()
        Issue.record("expected a HubError, got success", sourceLocation: sourceLocation)
    } catch let error as HubError {
        return error
    } catch {
        Issue.record("expected a HubError, got \(error)", sourceLocation: sourceLocation)
    }
    return nil
}

func jsonResponse(status: Int, _ body: HubJSON, headers: [(String, String)] = []) -> HTTPResponseMessage {
    jsonResponse(body, status: status, headers: headers)
}

/// Runs `body(i)` for i in 0..<count on `count` threads of their own, all at once (so
/// many callers really are in flight together, whatever the core count).
func onThreads(_ count: Int, _ body: @escaping @Sendable (Int) -> Void) {
    let group = DispatchGroup()
    for i in 0..<count {
        group.enter()
        let thread = Thread {
            body(i)
            group.leave()
        }
        thread.stackSize = 1 << 20
        thread.start()
    }
    group.wait()
}
