import Foundation
import XCTest
@testable import HubSandbox

/// The seeded users' last logins support the admin tasks that look at activity: spread
/// over the 18 months before the sandbox's clock, with recently active, lapsing, dormant
/// and never-logged-in cohorts among active users, consistent with creation times and
/// sessions, and the same for the same seed and clock.
final class SeededActivityTests: XCTestCase {
    let day = 86_400

    struct SeededUser {
        let id: String
        let status: String
        let created: Int
        let login: Int?
    }

    func users(_ hub: HubSandbox) throws -> [SeededUser] {
        var users: [SeededUser] = []
        try hub.engine.db.query("SELECT id, status, created_at, last_login_at FROM users ORDER BY id") {
            users.append(SeededUser(id: $0.text(0), status: $0.text(1), created: $0.int(2), login: $0.intOrNil(3)))
        }
        return users
    }

    func testActiveUsersFallIntoRecentLapsingDormantAndNeverCohorts() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock, users: 200)
        let now = Int(clock.now().timeIntervalSince1970)
        let active = try users(hub).filter { $0.status == "active" }
        let never = active.filter { $0.login == nil }
        let recent = active.filter { $0.login.map { now - $0 < 30 * day } ?? false }
        let lapsing = active.filter { $0.login.map { (30 * day..<90 * day).contains(now - $0) } ?? false }
        let dormant = active.filter { $0.login.map { now - $0 >= 90 * day } ?? false }
        // Seed 1 at the manual clock's start, 200 users: pinned, so a change to the seed
        // is deliberate (docs/sandbox.md describes these cohorts).
        XCTAssertEqual([active.count, recent.count, lapsing.count, dormant.count, never.count], [164, 94, 14, 47, 9])
        let oldest = active.compactMap(\.login).min() ?? now
        XCTAssertGreaterThan(now - oldest, 365 * day, "logins reach back more than a year")
        XCTAssertLessThanOrEqual(now - oldest, 548 * day, "and no further than 18 months")
        XCTAssertTrue(recent.contains { $0.id == SandboxFixtures.adaId })
    }

    func testALoginIsNeverBeforeCreationNorAfterNowAndInvitedUsersNeverLoggedIn() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock, users: 200)
        let now = Int(clock.now().timeIntervalSince1970)
        let all = try users(hub)
        for user in all {
            if let login = user.login {
                XCTAssertGreaterThanOrEqual(login, user.created, user.id)
                XCTAssertLessThanOrEqual(login, now, user.id)
            }
            if user.status == "invited" { XCTAssertNil(user.login, user.id) }
        }
        XCTAssertTrue(all.contains { $0.status == "suspended" && $0.login != nil }, "suspended users had logged in before")
    }

    func testSessionsBeginWithALoginSoInactiveUsersHaveNoLiveSession() throws {
        let clock = ManualClock()
        let hub = try makeHub(clock: clock, users: 200)
        let now = Int(clock.now().timeIntervalSince1970)
        let db = hub.engine.db
        var live = 0, afterLogin = 0, neverLoggedIn = 0
        try db.query("""
            SELECT u.last_login_at, s.created_at, s.expires_at, s.revoked_at FROM sessions s JOIN users u ON u.id = s.user_id
            """) { row in
            guard let login = row.intOrNil(0) else { neverLoggedIn += 1; return }
            if now - login >= 30 * self.day, row.int(2) > now, row.intOrNil(3) == nil { live += 1 }
            if now - login >= 30 * self.day, row.int(1) > login { afterLogin += 1 }
        }
        XCTAssertEqual(neverLoggedIn, 0, "a user who never logged in has no session")
        XCTAssertEqual(afterLogin, 0, "no session of an inactive user began after their last login")
        XCTAssertEqual(live, 0, "an inactive user has no live session")
        let inactive = try users(hub).filter { $0.status == "active" && ($0.login.map { now - $0 >= 90 * self.day } ?? false) }
        for user in inactive.prefix(10) {
            XCTAssertEqual(hub.call("GET", "/users/\(user.id)/sessions").json["data"]?.items.count, 0, user.id)
        }
    }

    func testTheSameSeedAndClockGiveTheSameLogins() throws {
        let clock = ManualClock()
        let a = try users(try makeHub(clock: clock, users: 200)).map { "\($0.id) \($0.login.map(String.init) ?? "null")" }
        let b = try users(try makeHub(clock: clock, users: 200)).map { "\($0.id) \($0.login.map(String.init) ?? "null")" }
        XCTAssertEqual(a, b)
        let other = try users(try makeHub(clock: clock, users: 200, seed: 2)).map { "\($0.id) \($0.login.map(String.init) ?? "null")" }
        XCTAssertNotEqual(a, other)
    }
}
