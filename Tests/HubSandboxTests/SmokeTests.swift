import XCTest
@testable import HubSandbox

final class SmokeTests: XCTestCase {
    func testHealthAndFirstPage() throws {
        let hub = try makeHub()
        XCTAssertEqual(hub.call("GET", "/health", token: nil, version: nil).text, #"{"status":"ok"}"#)
        let r = hub.call("GET", "/users?limit=5")
        XCTAssertEqual(r.status, 200, r.text)
        XCTAssertEqual(r.json["data"]?.items.count, 5)
        XCTAssertEqual(r.json["page"]?["has_more"], .bool(true))
        let ada = hub.call("GET", "/users/usr_ada")
        XCTAssertEqual(ada.json["email"]?.string, "ada@example.com")
        XCTAssertEqual(ada.headers["ETag"], "W/\"1\"")
    }
}
