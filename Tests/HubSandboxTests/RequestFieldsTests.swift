import Foundation
import HTTPKit
import XCTest
@testable import HubSandbox

/// The sandbox's ASCII fast paths answer exactly what the Foundation calls they replace answer.
final class RequestFieldsTests: XCTestCase {
    func testTrimmingMatchesFoundation() {
        for s in ["", " ", "\t x \t", "abc", "  abc", "abc  ", "a b", "\u{A0}nbsp\u{A0}", " \u{2003}em ", "\n x \n", "é "] {
            XCTAssertEqual(ASCII.trimmingWhitespace(Substring(s)), s.trimmingCharacters(in: .whitespaces), s.debugDescription)
        }
    }

    func testPermissionListsAreMemoizedFaithfully() throws {
        let hub = try makeHub()
        let engine = hub.engine
        for csv in ["", "a", "a,b", "users.list,audit.view,users.list", ",x,,y,"] {
            XCTAssertEqual(engine.permissions(csv), HubEngine.permissionSet(csv))
            XCTAssertEqual(engine.permissions(csv), HubEngine.permissionSet(csv))
        }
        for i in 0..<300 { XCTAssertEqual(engine.permissions("p\(i)"), ["p\(i)"]) }
        XCTAssertLessThanOrEqual(engine.permissionCache.count, 256)
    }
}
