import Foundation
import HTTPKit
import XCTest
@testable import HubSandbox

/// A response with its JSON body decoded.
struct Resp {
    let status: Int
    let headers: HTTPHeaders
    let body: Data
    let dropped: Bool
    var json: JSON { (try? JSONParser.parse(body)) ?? .null }
    var code: String? { json["error"]?["code"]?.stringValue }
    var text: String { String(decoding: body, as: UTF8.self) }
}

extension JSON {
    subscript(index: Int) -> JSON? {
        if case .array(let a) = self, index < a.count { return a[index] }
        return nil
    }
    var items: [JSON] { if case .array(let a) = self { return a }; return [] }
    var string: String? { stringValue }
    var int: Int? { if case .int(let i) = self { return i }; return nil }
}

let jobsKey = SandboxFixtures.jobsKeySecret

/// Builds a small sandbox (fast to seed) on a manual clock.
func makeHub(clock: ManualClock = ManualClock(), rateLimits: SandboxOptions.RateLimits = .off,
             faults: FaultSpec = .none, users: Int = 60, auditEvents: Int = 200, seed: Int = 1,
             storage: SandboxOptions.Storage = .memory) throws -> HubSandbox {
    try HubSandbox(options: SandboxOptions(storage: storage, seed: seed, scale: .init(users: users, auditEvents: auditEvents),
                                           rateLimits: rateLimits, faults: faults, clock: clock))
}

extension HubSandbox {
    /// Sends one request with `Substratal-Version: 1` and, when given, a bearer token.
    @discardableResult
    func call(_ method: String, _ target: String, token: String? = jobsKey, body: String? = nil,
              headers: [(String, String)] = [], version: String? = "1") -> Resp {
        var h = HTTPHeaders()
        if let version { h.add("Substratal-Version", version) }
        if let token { h.add("Authorization", "Bearer \(token)") }
        if body != nil { h.add("Content-Type", "application/json") }
        for (n, v) in headers { h.add(n, v) }
        let r = handle(HTTPRequestMessage(method: method, target: target, headers: h, body: Data((body ?? "").utf8)))
        return Resp(status: r.status, headers: r.headers, body: r.body, dropped: r.dropped)
    }

    /// Logs in (completing MFA with 123456 when asked) and returns the token response.
    func login(_ email: String, file: StaticString = #filePath, line: UInt = #line) -> JSON {
        var r = call("POST", "/auth/login", token: nil, body: #"{"email":"\#(email)","password":"x"}"#)
        if r.json["mfa_required"]?.boolValue == true, let mfa = r.json["mfa_token"]?.string {
            r = call("POST", "/auth/mfa/verify", token: nil, body: #"{"mfa_token":"\#(mfa)","code":"123456"}"#)
        }
        XCTAssertEqual(r.status, 200, r.text, file: file, line: line)
        return r.json
    }

    func accessToken(_ email: String) -> String { login(email)["access_token"]?.string ?? "" }
}
