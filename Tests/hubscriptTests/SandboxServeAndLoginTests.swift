import Foundation
import XCTest

/// `hubscript sandbox serve` over real HTTP (curl and hubscript itself as clients),
/// its clean shutdown, and `login` / `logout` of a session profile against it.
final class SandboxServeAndLoginTests: XCTestCase {
    /// Starts `sandbox serve --memory --port 0`; returns the process and the Hub's URL.
    func serve(_ cli: CLIHarness) throws -> (Process, Pipe, String) {
        let (p, out, _) = cli.process(["sandbox", "serve", "--memory", "--port", "0", "--dispatch-port", "0"])
        try p.run()
        var text = ""
        let handle = out.fileHandleForReading
        let deadline = Date().addingTimeInterval(20)
        while !text.contains("Ctrl-C stops."), Date() < deadline {
            let chunk = handle.availableData
            if chunk.isEmpty { break }
            text += String(decoding: chunk, as: UTF8.self)
        }
        let url = try XCTUnwrap(text.split(separator: " ").first { $0.hasPrefix("http://127.0.0.1:") }, text)
        return (p, out, String(url))
    }

    func curl(_ args: [String]) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/curl")
        p.arguments = ["-s"] + args
        let out = Pipe()
        p.standardOutput = out
        try p.run()
        let data = out.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(decoding: data, as: UTF8.self)
    }

    func testServeAnswersCurlAndStopsCleanlyOnSIGTERM() throws {
        let cli = try CLIHarness(testCase: self)
        let (server, _, url) = try serve(cli)
        XCTAssertEqual(try curl([url + "/health"]), #"{"status":"ok"}"#)
        let ada = try curl(["-H", "Substratal-Version: 1", "-H", "Authorization: Bearer satk_test_jobs_sandbox_0000000000000000",
                            url + "/users/usr_ada"])
        XCTAssertTrue(ada.contains(#""email":"ada@example.com""#), ada)
        let unauthenticated = try curl(["-H", "Substratal-Version: 1", url + "/users/usr_ada"])
        XCTAssertTrue(unauthenticated.contains(#""code":"unauthenticated""#), unauthenticated)
        kill(server.processIdentifier, SIGTERM)
        server.waitUntilExit()
        XCTAssertEqual(server.terminationStatus, 0)
    }

    func testLoginWithMFAThenARecipeThenLogout() throws {
        let cli = try CLIHarness(testCase: self)
        let (server, _, url) = try serve(cli)
        defer {
            kill(server.processIdentifier, SIGTERM)
            server.waitUntilExit()
        }
        let config = try cli.file("hubscript.config.lua", """
            return { profiles = { me = { hub_url = "\(url)", email = "admin@example.com" } } }
            """)

        // No MFA code and no terminal: a clear usage error.
        let (p, _, err) = cli.process(["login", "--config", config, "--password-stdin"])
        let stdin = Pipe()
        p.standardInput = stdin
        try p.run()
        stdin.fileHandleForWriting.write(Data("any password\n".utf8))
        try stdin.fileHandleForWriting.close()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 2)
        XCTAssertEqual(String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self),
                       "hubscript login: admin@example.com uses MFA; pass --mfa-code\n")

        let login = try cli.run(["login", "--config", config, "--password-stdin", "--mfa-code", "123456"], input: "any password\n")
        XCTAssertEqual(login.status, 0)
        XCTAssertEqual(login.stdout, "Signed in to 'me' as admin@example.com.\n")
        let stored = cli.stateDir.appendingPathComponent("credentials/me.json")
        let mode = try FileManager.default.attributesOfItem(atPath: stored.path)[.posixPermissions] as? NSNumber
        XCTAssertEqual(mode?.intValue, 0o600)

        // The session works for a recipe (the refresh token is used and rotated).
        let recipe = try cli.file("whoami.lua", """
            recipe { name = "whoami", needs = { "users.list" } }
            print(hub.capabilities().user_id, hub.users.get("ada@example.com").id)
            """)
        let run = try cli.run([recipe, "--config", config], expect: 0)
        XCTAssertEqual(run.stdout, "usr_admin\tusr_ada\n")

        let logout = try cli.run(["logout", "--config", config], expect: 0)
        XCTAssertEqual(logout.stdout, "Signed out of 'me'.\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: stored.path))
        let after = try cli.run([recipe, "--config", config])
        // Signed out: the profile's credential is missing, as a refused one is (exit 3).
        XCTAssertEqual(after.status, 3, after.stderr)
        XCTAssertTrue(after.stderr.contains("hubscript login --profile me"), after.stderr)
    }
}
