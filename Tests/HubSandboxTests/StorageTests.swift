import Foundation
import SQLiteKit
import XCTest
@testable import HubSandbox

/// File storage across instances; deterministic seeding and reset.
final class StorageTests: XCTestCase {
    func testFileStatePersistsAcrossInstances() throws {
        let dir = FileManager.default.temporaryDirectory.appendingPathComponent("hubsandbox-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: dir) }
        let url = dir.appendingPathComponent("hub.sqlite")
        var grantId: String?
        do {
            let hub = try makeHub(storage: .file(url))
            let r = hub.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_chat","source":"trial"}"#,
                             headers: [("Idempotency-Key", "persist")])
            XCTAssertEqual(r.status, 201)
            grantId = r.json["id"]?.string
        }
        let again = try makeHub(seed: 99, storage: .file(url))
        let got = again.call("GET", "/entitlements/\(grantId ?? "")")
        XCTAssertEqual(got.status, 200)
        XCTAssertEqual(got.json["application_id"]?.string, "app_chat")
        XCTAssertEqual(again.call("POST", "/users/usr_ada/entitlements", body: #"{"application_id":"app_chat","source":"trial"}"#,
                                  headers: [("Idempotency-Key", "persist")]).headers["Idempotent-Replayed"], "true")
        let users = try again.engine.db.first("SELECT COUNT(*) FROM users") { $0.int(0) }
        XCTAssertEqual(users, 60)
    }

    func testTwoInstancesOpeningOneNewFileSeedItOnce() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("hubsandbox-\(UUID().uuidString).sqlite")
        defer { for ext in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: url.path + ext) } }
        let opened = ResultBox()
        let lock = NSLock()
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            if let hub = try? makeHub(storage: .file(url)), hub.call("GET", "/users/usr_ada").status == 200 {
                lock.withLock { opened.status += 1 }
            }
        }
        XCTAssertEqual(opened.status, 2)
        let users = try makeHub(storage: .file(url)).engine.db.first("SELECT COUNT(*) FROM users") { $0.int(0) }
        XCTAssertEqual(users, 60)
    }

    func testResetIsDeterministic() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock, seed: 5)
        let first = hub.call("GET", "/users?include_inactive=true").body
        hub.call("POST", "/users/usr_ada/suspend", body: "{}")
        try hub.reset(seed: 5)
        XCTAssertEqual(hub.call("GET", "/users?include_inactive=true").body, first)
        XCTAssertEqual(hub.call("GET", "/users/usr_ada").json["status"]?.string, "active")
        try hub.reset(seed: 6)
        XCTAssertNotEqual(hub.call("GET", "/users?include_inactive=true").body, first)
        let other = try makeHub(clock: clock, seed: 5)
        XCTAssertEqual(other.call("GET", "/users?include_inactive=true").body, first)
    }

    func testSeedHasEveryStatusAndSource() throws {
        let hub = try makeHub(users: 200)
        let db = hub.engine.db
        var statuses = Set<String>(), sources = Set<String>(), userStatuses = Set<String>()
        try db.query("SELECT DISTINCT status FROM entitlements") { statuses.insert($0.text(0)) }
        try db.query("SELECT DISTINCT source FROM entitlements") { sources.insert($0.text(0)) }
        try db.query("SELECT DISTINCT status FROM users") { userStatuses.insert($0.text(0)) }
        XCTAssertEqual(statuses, ["active", "disabled", "expired", "revoked"])
        XCTAssertEqual(sources, ["purchase", "trial", "admin_grant", "org_seat"])
        XCTAssertEqual(userStatuses, ["active", "invited", "suspended", "deleted"])
        XCTAssertEqual(hub.call("GET", "/users/usr_ada/sessions").json["data"]?.items.count, 2)
        XCTAssertEqual(hub.call("GET", "/api-keys?owner_user_id=usr_ada").json["data"]?.items.first?["id"]?.string, "key_ada_cli")
    }
}

/// Many threads at once: every request is answered, every grant lands exactly once, and
/// a second call with the same key is a replay of the first — never a second grant, and
/// never a conflict of the grant itself (which broken idempotency would produce).
final class ConcurrencyTests: XCTestCase {
    struct Answer {
        let user: String
        let status: Int
        let code: String?
        let replayed: Bool
        let grant: String?
    }

    func testConcurrentCallersAreSerializedSafely() throws {
        let hub = try makeHub(users: 120)
        let ids = (hub.call("GET", "/users?status=active&limit=40").json["data"]?.items ?? []).compactMap { $0["id"]?.string }
        XCTAssertEqual(ids.count, 40)
        let answers = ClientLockedList<Answer>()
        DispatchQueue.concurrentPerform(iterations: ids.count * 2) { i in
            let id = ids[i % ids.count]
            _ = hub.call("GET", "/users/\(id)")
            let r = hub.call("POST", "/users/\(id)/entitlements", body: #"{"application_id":"app_hub","source":"trial"}"#,
                             headers: [("Idempotency-Key", "c-\(id)")])
            answers.append(Answer(user: id, status: r.status, code: r.code,
                                  replayed: r.headers["Idempotent-Replayed"] == "true", grant: r.json["id"]?.string))
        }
        // A same-key call either replays the first (201, Idempotent-Replayed) or, while the
        // first is still running, is told so (409 idempotency_key_in_flight): nothing else.
        for a in answers.items {
            XCTAssertTrue(a.status == 201 || (a.status == 409 && a.code == "idempotency_key_in_flight"),
                          "\(a.user): \(a.status) \(a.code ?? "")")
        }
        var original: [String: String] = [:]
        for a in answers.items where a.status == 201 && !a.replayed { original[a.user] = a.grant }
        XCTAssertEqual(Set(original.keys), Set(ids), "each user's first call granted")
        XCTAssertEqual(answers.items.filter { $0.status == 201 && !$0.replayed }.count, ids.count, "one fresh grant per key")
        for a in answers.items where a.replayed {
            XCTAssertEqual(a.grant, original[a.user], "a replay answers the first call's grant")
        }
        // Once all are done, the same key replays the first call, for every user.
        for id in ids {
            let again = hub.call("POST", "/users/\(id)/entitlements", body: #"{"application_id":"app_hub","source":"trial"}"#,
                                 headers: [("Idempotency-Key", "c-\(id)")])
            XCTAssertEqual(again.status, 201, again.text)
            XCTAssertEqual(again.headers["Idempotent-Replayed"], "true", id)
            XCTAssertEqual(again.json["id"]?.string, original[id], id)
        }
        let granted = try hub.engine.db.first("SELECT COUNT(*) FROM entitlements WHERE application_id = 'app_hub'") { $0.int(0) }
        XCTAssertEqual(granted, ids.count)
        let events = try hub.engine.db.first("SELECT COUNT(*) FROM audit_events WHERE action = 'entitlement.granted' AND request_id LIKE 'req_%' AND request_id NOT LIKE 'req_seed%'") { $0.int(0) }
        XCTAssertEqual(events, ids.count)
    }
}

/// Items appended from many threads.
final class ClientLockedList<Element>: @unchecked Sendable {
    private let lock = NSLock()
    private var storage: [Element] = []
    func append(_ e: Element) { lock.withLock { storage.append(e) } }
    var items: [Element] { lock.withLock { storage } }
}
