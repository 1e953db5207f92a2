import Foundation
import XCTest

/// A served sandbox (reset first) with a harness and a reader, for the gate's CLI tests.
struct GateLab {
    let cli: CLIHarness
    let server: ServedSandbox
    let reader: SandboxReader

    /// A configuration of `profiles` (the inside of `profiles = { … }`; `URL` stands
    /// for the served Hub), plus `extra` top-level keys.
    func config(_ profiles: String, extra: String = "") throws -> String {
        try cli.file("gate-\(UUID().uuidString).config.lua",
                     "return { profiles = { \(profiles.replacingOccurrences(of: "URL", with: server.url)) }, \(extra) }")
    }

    /// Ada's status, and how many audit events name her: what a write would change.
    func adaState() throws -> (status: String, events: Int, entitlements: Int) {
        let ada = try reader.get("/users/usr_ada")
        return (ada.string("status") ?? "?", try reader.all("/audit-events", "target_user_id=usr_ada").count,
                try reader.all("/users/usr_ada/entitlements").filter { $0.string("status") != "revoked" }.count)
    }

    func login(_ config: String, profile: String) throws {
        let r = try cli.run(["login", "--config", config, "--profile", profile, "--password-stdin", "--mfa-code", "123456"],
                            input: "any password\n")
        XCTAssertEqual(r.status, 0, r.output)
    }

    /// A fresh sandbox served from its own state folder.
    init(testCase: XCTestCase) throws {
        let cli = try CLIHarness(testCase: testCase)
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        let server = try ServedSandbox(cli, state: hubState, faults: "none")
        self.init(cli: cli, server: server, reader: try SandboxReader(served: server.url))
    }

    init(cli: CLIHarness, server: ServedSandbox, reader: SandboxReader) {
        self.cli = cli
        self.server = server
        self.reader = reader
    }
}
