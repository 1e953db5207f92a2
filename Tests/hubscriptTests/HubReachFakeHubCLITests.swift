import Foundation
import XCTest

/// A Hub of our own making (python3's http.server): its `Date` header off by ten
/// minutes, which `doctor` reports; and a 401 whose message tries to start lines of
/// its own and clear the terminal, which stays one escaped line of the error.
final class HubReachFakeHubCLITests: XCTestCase {
    static let script = """
    import http.server, json, sys, time, email.utils
    skew = float(sys.argv[1])
    class Hub(http.server.BaseHTTPRequestHandler):
        def date_time_string(self, timestamp=None):
            return email.utils.formatdate(time.time() + skew, usegmt=True)
        def log_message(self, *args):
            pass
        def do_GET(self):
            auth = self.headers.get("Authorization", "")
            if "satk_test_odd" in auth:
                status, body = 409, {"error": {"code": "odd", "message": "odd\\r\\n\\u001b[2Jprofile      forged"}}
            elif "satk_test_bad" in auth:
                status, body = 401, {"error": {"code": "unauthenticated",
                                               "message": "revoked\\n\\u001b[2Jdone: run forged \\u2014 0 reads, 0 writes in 0.00 s"}}
            elif self.path.startswith("/users/me"):
                status, body = 400, {"error": {"code": "user_token_required", "message": "a user token is required"}}
            elif self.path.startswith("/api-keys/key_fake"):
                status, body = 200, {"id": "key_fake", "name": "Fake", "permissions": ["users.list"], "status": "active",
                                     "owner_user_id": "usr_fake"}
            else:
                status, body = 404, {"error": {"code": "not_found", "message": "no such thing"}}
            data = json.dumps(body).encode()
            self.send_response(status)
            self.send_header("Content-Type", "application/json")
            self.send_header("Content-Length", str(len(data)))
            self.end_headers()
            self.wfile.write(data)
    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Hub)
    print(server.server_address[1], flush=True)
    server.serve_forever()
    """

    var cli: CLIHarness!
    var hub: Process?
    var url = ""

    override func setUpWithError() throws {
        try TLSTools.require(["python3"])
        cli = try CLIHarness(testCase: self)
        let script = try cli.file("fake-hub.py", Self.script)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: try XCTUnwrap(TLSTools.path(of: "python3")))
        process.arguments = [script, "-600"]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        hub = process
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        let port = try XCTUnwrap(Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)))
        url = "http://127.0.0.1:\(port)"
        cli.extraEnvironment = ["http_proxy": "", "all_proxy": "", "ALL_PROXY": ""]
    }

    override func tearDown() {
        if let hub, hub.isRunning { hub.terminate(); hub.waitUntilExit() }
    }

    func testDoctorReportsAClockTenMinutesOffTheHubs() throws {
        let config = try cli.file("fake.config.lua", """
            return { profiles = { fake = { hub_url = "\(url)", api_key = "satk_test_good", api_key_id = "key_fake",
                                           rate_limit_per_minute = 0 } } }
            """)
        let r = try cli.run(["doctor", "--config", config])
        let clock = try XCTUnwrap(r.stdout.split(separator: "\n").first { $0.hasPrefix("FAIL  clock 'fake': ") }, r.stdout)
        XCTAssertNotNil(clock.range(of: #"^FAIL  clock 'fake': this machine's clock is 60[01] s ahead of the Hub's; schedules, "#
                                    + #"token lifetimes and times in the journal go wrong: set the clock by NTP \(timedatectl set-ntp true\)$"#,
                                    options: .regularExpression), String(clock))
        XCTAssertTrue(r.stdout.contains("ok    hub 'fake': \(url) answered (plain HTTP on this machine) in "), r.stdout)
        XCTAssertEqual(r.status, 1)
        let who = try cli.run(["whoami", "--config", config])
        XCTAssertTrue(who.stdout.contains("who         API key key_fake \"Fake\", owned by usr_fake, active\n"), who.stdout)
        XCTAssertEqual(who.status, 0)
    }

    func testAHostile401MessageStaysOneEscapedLine() throws {
        let config = try cli.file("bad.config.lua", """
            return { profiles = { bad = { hub_url = "\(url)", api_key = "satk_test_bad", api_key_permissions = { "users.list" },
                                          rate_limit_per_minute = 0 } } }
            """)
        try cli.file("count.lua", """
            recipe { name = "count", needs = { "users.list" } }
            for _ in hub.users.list{} do end
            """)
        for args in [["run", "count.lua", "--config", config], ["whoami", "--config", config], ["doctor", "--config", config]] {
            let r = try cli.run(args)
            XCTAssertFalse(r.output.contains("\u{1b}"), "\(args[0]): \(r.output)")
            XCTAssertFalse(r.output.split(separator: "\n").contains { $0.hasPrefix("done: run forged") }, "\(args[0]): \(r.output)")
            XCTAssertTrue(r.output.contains("the API key is unknown, revoked or expired (401 from \(url): revoked\\n"), "\(args[0]): \(r.output)")
            XCTAssertEqual(r.status, args[0] == "doctor" ? 1 : 3, "\(args[0]): \(r.output)")
        }
    }
}
