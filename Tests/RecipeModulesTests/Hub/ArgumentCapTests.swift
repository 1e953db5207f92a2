import Foundation
import HTTPKit
import HubSandbox
import ScriptHost
import SystemText
import XCTest
import JSONKit
@testable import HubClient
@testable import RunJournal
@testable import RecipeModules
@testable import Runs

/// Every string a `hub` binding takes from a recipe is capped before any work, and ids
/// cannot be `.` or `..`: the refused call sends nothing and journals nothing.
final class ArgumentCapTests: XCTestCase {
    /// An in-memory sandbox Hub and journal; records what reached the Hub.
    final class Harness {
        let sandbox: HubSandbox
        let journal: Journal
        let root: URL
        let seen = ClientLock((writes: 0, longestTarget: 0))

        init() throws {
            sandbox = try HubSandbox(options: SandboxOptions(storage: .memory, rateLimits: .off))
            journal = try Journal.inMemory()
            root = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-caps-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        }

        deinit { try? FileManager.default.removeItem(at: root) }

        /// Runs `body` under a manifest that declares every permission; returns what it printed.
        func run(_ body: String, file: StaticString = #filePath, line: UInt = #line) throws -> (outcome: HubRunOutcome, lines: [String]) {
            let sandbox = self.sandbox
            let seen = self.seen
            let client = try HubClient(
                baseURL: URL(string: "http://127.0.0.1")!, credential: .apiKey(SandboxFixtures.jobsKeySecret),
                transport: InProcessTransport(handler: { request in
                    seen.withLock {
                        if request.method != "GET" { $0.writes += 1 }
                        $0.longestTarget = max($0.longestTarget, request.target.utf8.count)
                    }
                    return sandbox.handle(request)
                }), options: HubClientOptions(rateLimitPerMinute: 0, warn: { _ in }, profileName: "jobs", apiKeyID: SandboxFixtures.jobsKeyId))
            let connection = HubConnection(profileName: "jobs", client: client, notice: nil)
            let url = root.appendingPathComponent("caps.lua")
            try Data(("""
                recipe { name = "caps", needs = { "users.list", "users.manage", "entitlements.manage", "roles.manage",
                  "api_keys.manage", "organizations.manage", "audit.view", "notifications.send" } }
                local function try(f, ...)
                  local ok, e = pcall(f, ...)
                  print(ok and "ok" or tostring(e))
                end

                """ + body).utf8).write(to: url)
            var request = HubRunRequest()
            request.outputFolder = root.appendingPathComponent("out")
            request.progress = MemoryProgressReporter()
            let output = MemoryOutput()
            let outcome = try HubRecipeRun.execute(try PreparedRecipe(path: url.path, cliParams: []), request: request,
                                                   connection: connection, journal: journal,
                                                   state: StateDirectory(explicit: root.appendingPathComponent("state").path),
                                                   output: output)
            XCTAssertNil(outcome.failure, outcome.failure?.message ?? "", file: file, line: line)
            return (outcome, output.lines)
        }
    }

    func testOversizeArgumentsAreRefusedNamingBindingArgumentAndCap() throws {
        let h = try Harness()
        let (outcome, lines) = try h.run("""
            local big = string.rep("x", 2 * 1024 * 1024)
            try(hub.users.get, big)
            try(hub.users.get, big .. "@example.com")
            try(hub.users.suspend, big)
            try(hub.users.suspend, "usr_ada", { reason = string.rep("r", 2001) })
            try(hub.users.suspend, "usr_ada", { key = string.rep("k", 256) })
            try(hub.entitlements.revoke, "ent_x", string.rep("r", 256))
            try(hub.entitlements.grant, "usr_ada", { application_id = string.rep("a", 256) })
            try(hub.users.update, "usr_ada", { display_name = big })
            try(hub.users.update, "usr_ada", { custom = { note = big } })
            try(hub.users.update, "usr_ada", { [string.rep("f", 256)] = 1 })
            local many = {}
            for i = 1, 70 do many["f" .. i] = string.rep("v", 16000) end
            try(hub.users.update, "usr_ada", many)
            try(hub.notifications.send, "app_x", { user_id = string.rep("u", 256), title = "t", body = "b", category = "c" })
            try(hub.sessions.revoke, "usr_ada", big)
            """)
        XCTAssertEqual(lines, [
            "bad argument #1 to 'hub.users.get' (id is 2097152 bytes; the most is 255)",
            "bad argument #1 to 'hub.users.get' (email is 2097164 bytes; the most is 255)",
            "bad argument #1 to 'hub.users.suspend' (id is 2097152 bytes; the most is 255)",
            "bad argument #2 to 'hub.users.suspend' (field 'reason' is 2001 bytes; the most is 2000)",
            "bad argument #2 to 'hub.users.suspend' (key is 256 bytes; the most is 255)",
            "bad argument #2 to 'hub.entitlements.revoke' (reason is 256 bytes; the most is 255)",
            "bad argument #2 to 'hub.entitlements.grant' (field 'application_id' is 256 bytes; the most is 255)",
            "bad argument #2 to 'hub.users.update' (field 'display_name' is 2097152 bytes; the most is 16384)",
            "bad argument #2 to 'hub.users.update' (field 'custom.note' is 2097152 bytes; the most is 16384)",
            "bad argument #2 to 'hub.users.update' (a field name is 256 bytes; the most is 255)",
            "bad argument #2 to 'hub.users.update' (the table makes a request body of more than 1048576 bytes of JSON; the most is 1048576)",
            "bad argument #2 to 'hub.notifications.send' (field 'user_id' is 256 bytes; the most is 255)",
            "bad argument #2 to 'hub.sessions.revoke' (id is 2097152 bytes; the most is 255)",
        ])
        XCTAssertEqual(h.seen.withLock { $0.writes }, 0, "nothing was sent")
        XCTAssertLessThan(h.seen.withLock { $0.longestTarget }, 200)
        XCTAssertEqual(try h.journal.writes(runID: outcome.runID).count, 0, "nothing was journalled")
    }

    func testListFiltersAreCapped() throws {
        let h = try Harness()
        let (_, lines) = try h.run("""
            try(hub.users.list, { q = string.rep("x", 256) })
            try(hub.users.list, { [string.rep("z", 1000)] = "x" })
            local actions = {}
            for i = 1, 101 do actions[i] = "user.updated" end
            try(hub.audit.query, { action = actions })
            try(hub.audit.query, { action = { "user.updated", string.rep("a", 256) } })
            try(hub.entitlements.for_user, "usr_ada", { status = string.rep("s", 256) })
            print(hub.users.list{ q = string.rep("x", 255) }:count())
            """)
        XCTAssertEqual(lines, [
            "bad argument #1 to 'hub.users.list' (filter 'q' is 256 bytes; the most is 255)",
            "bad argument #1 to 'hub.users.list' (unknown filter 'zzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzzz…' (filters: status, email, q, organization_id, created_after, created_before))",
            "bad argument #1 to 'hub.audit.query' (filter 'action' lists 101 values; the most is 100)",
            "bad argument #1 to 'hub.audit.query' (filter 'action' is 256 bytes; the most is 255)",
            "bad argument #2 to 'hub.entitlements.for_user' (filter 'status' is 256 bytes; the most is 255)",
            "0",
        ])
    }

    func testDotSegmentsAndEmptyIdsAreRefused() throws {
        let h = try Harness()
        let (outcome, lines) = try h.run("""
            try(hub.users.get, "..")
            try(hub.users.get, ".")
            try(hub.users.get, "")
            try(hub.users.suspend, "..")
            try(hub.roles.assign, "usr_ada", "..")
            try(hub.organizations.remove_member, ".", "usr_ada")
            try(hub.entitlements.for_user, "..")
            print(hub.users.get("usr_ada").id)
            """)
        XCTAssertEqual(lines, [
            "bad argument #1 to 'hub.users.get' (an id such as usr_… expected, got '..' ('.' and '..' are not ids))",
            "bad argument #1 to 'hub.users.get' (an id such as usr_… expected, got '.' ('.' and '..' are not ids))",
            "bad argument #1 to 'hub.users.get' (an id such as usr_… expected, got '')",
            "bad argument #1 to 'hub.users.suspend' (an id such as usr_… expected, got '..' ('.' and '..' are not ids))",
            "bad argument #2 to 'hub.roles.assign' (an id such as usr_… expected, got '..' ('.' and '..' are not ids))",
            "bad argument #1 to 'hub.organizations.remove_member' (an id such as usr_… expected, got '.' ('.' and '..' are not ids))",
            "bad argument #1 to 'hub.entitlements.for_user' (an id such as usr_… expected, got '..' ('.' and '..' are not ids))",
            "usr_ada",
        ])
        XCTAssertEqual(h.seen.withLock { $0.writes }, 0)
        XCTAssertEqual(try h.journal.writes(runID: outcome.runID).count, 0)
    }

    /// An id such as `usr_ada\0garbage` must not pass validation: a server that reads the id
    /// as a C string would suspend usr_ada while the path, journal and plan name another id.
    func testIdsAndEmailsWithControlCharactersAreRefused() throws {
        let h = try Harness()
        let (outcome, lines) = try h.run("""
            try(hub.users.suspend, "usr_ada\\0garbage", { reason = "t" })
            try(hub.users.get, "usr_ada\\0")
            try(hub.users.get, "ada\\r@example.com")
            try(hub.roles.assign, "usr_ada", "rol_x\\127")
            print(hub.users.get("usr_ada").status)
            """)
        XCTAssertEqual(lines, [
            "bad argument #1 to 'hub.users.suspend' (an id cannot contain control characters (byte 8 is 0x00))",
            "bad argument #1 to 'hub.users.get' (an id cannot contain control characters (byte 8 is 0x00))",
            "bad argument #1 to 'hub.users.get' (an email cannot contain control characters (byte 4 is 0x0D))",
            "bad argument #2 to 'hub.roles.assign' (an id cannot contain control characters (byte 6 is 0x7F))",
            "active",
        ])
        XCTAssertEqual(h.seen.withLock { $0.writes }, 0)
        XCTAssertEqual(try h.journal.writes(runID: outcome.runID).count, 0)
    }

    /// The issue's case: a 48 MiB query string spent 27 s in Swift; now it is refused
    /// after one copy of the string.
    func testAHugeQueryStringIsRefusedQuickly() throws {
        let h = try Harness()
        let start = Date()
        let (_, lines) = try h.run("""
            try(hub.users.list, { q = string.rep("é", 24 * 1024 * 1024) })
            try(hub.users.get, string.rep("@", 48 * 1024 * 1024))
            """)
        let seconds = Date().timeIntervalSince(start)
        XCTAssertEqual(lines, [
            "bad argument #1 to 'hub.users.list' (filter 'q' is 50331648 bytes; the most is 255)",
            "bad argument #1 to 'hub.users.get' (email is 50331648 bytes; the most is 255)",
        ])
        XCTAssertLessThan(seconds, 5, "took \(seconds) s")
        XCTAssertLessThan(h.seen.withLock { $0.longestTarget }, 200)
    }
}

/// The backstop at the write entry point (`WriteCoordinator.perform`): whatever a binding
/// let through, nothing oversize and no dot segment is ever journalled or sent.
final class WriteBackstopTests: XCTestCase {
    func testOversizeOrDotPathsAndOversizeBodiesAreNeverJournalled() throws {
        let journal = try Journal.inMemory()
        _ = try journal.startRun(RunStart(id: "run_caps", recipePath: "recipes/caps.lua", recipeSHA256: String(repeating: "ab", count: 32),
                                          paramsJSON: "{}", profile: "default", mode: .run), masking: SecretRedactor())
        let writes = WriteCoordinator(runID: "run_caps", mode: .live, journal: journal, writeLimit: nil, masking: SecretRedactor())
        let big = String(repeating: "x", count: 2 << 20)
        let cases: [(WriteIntent, String)] = [
            (WriteIntent(method: "POST", path: "/users/\(big)/suspend", summary: "suspend"),
             "request_too_large: cannot send POST /users/\(String(repeating: "x", count: 73))…: the path is 2097167 bytes; the most is 8192. Nothing was sent or journalled."),
            (WriteIntent(method: "DELETE", path: "/users/usr_ada/../api-keys/key_1", summary: "revoke"),
             "invalid_path: cannot send DELETE /users/usr_ada/../api-keys/key_1: a path is '/' and segments that are not empty, '.' or '..'. Nothing was sent or journalled."),
            (WriteIntent(method: "DELETE", path: "/users/%2E%2e/sessions/ses_1", summary: "revoke"),
             "invalid_path: cannot send DELETE /users/%2E%2e/sessions/ses_1: a path is '/' and segments that are not empty, '.' or '..'. Nothing was sent or journalled."),
            (WriteIntent(method: "POST", path: "/users//suspend", summary: "suspend"),
             "invalid_path: cannot send POST /users//suspend: a path is '/' and segments that are not empty, '.' or '..'. Nothing was sent or journalled."),
            (WriteIntent(method: "PATCH", path: "/users/usr_ada", body: CanonicalJSON(["notes": .array(Array(repeating: .string(String(repeating: "n", count: 16 << 10)), count: 70))]), summary: "update"),
             "request_too_large: cannot send PATCH /users/usr_ada: the body is 1147101 bytes of JSON; the most is 1048576. Nothing was sent or journalled."),
        ]
        for (intent, message) in cases {
            XCTAssertThrowsError(try writes.perform(intent) { _ in XCTFail("sent"); return .nilValue }) {
                XCTAssertEqual("\($0)", message)
            }
        }
        XCTAssertEqual(try journal.writes(runID: "run_caps").count, 0)
        XCTAssertEqual(writes.performed, 0)
        // A path with a query keeps working.
        _ = try writes.perform(WriteIntent(method: "POST", path: "/users/usr_ada/suspend?notify=false", summary: "suspend")) { _ in .bool(true) }
        XCTAssertEqual(try journal.writes(runID: "run_caps").count, 1)
    }
}
