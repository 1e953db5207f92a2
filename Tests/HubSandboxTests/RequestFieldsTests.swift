import Foundation
import HTTPKit
import XCTest
@testable import HubSandbox

/// The ASCII fast paths for header fields and the request target answer exactly what the
/// HTTPKit / Foundation calls they replace answer.
final class RequestFieldsTests: XCTestCase {
    func testFieldMatchesSubscript() {
        let names = ["Authorization", "authorization", "AUTHORIZATION", "Authorizatio", "Authorizations", "X-Request-Id",
                     "x-request-id", "Idempotency-Key", "Idempotency-\u{212A}ey", "idempotency-\u{212A}EY", "Ä", "",
                     "Substratal-Version", "Substratal_Version", "If-Match", "IF-MATCH", "User-Agent", "Straße"]
        let wanted = ["Authorization", "X-Request-Id", "Idempotency-Key", "Substratal-Version", "If-Match", "User-Agent", "Nope"]
        for name in names {
            let headers = HTTPHeaders([("Other", "o"), (name, "v-\(name)"), ("Authorization", "second")])
            for w in wanted {
                XCTAssertEqual(headers.field(w), headers[w], "\(name) / \(w)")
            }
        }
        XCTAssertNil(HTTPHeaders().field("Authorization"))
    }

    func testEqualIgnoringCase() {
        XCTAssertEqual(ASCII.equalIgnoringCase("content-LENGTH", "Content-Length"), true)
        XCTAssertEqual(ASCII.equalIgnoringCase("content-lengt", "Content-Length"), false)
        XCTAssertEqual(ASCII.equalIgnoringCase("content_length", "Content-Length"), false)
        XCTAssertEqual(ASCII.equalIgnoringCase("[", "{"), false)  // not letters: no case
        XCTAssertNil(ASCII.equalIgnoringCase("\u{212A}eep-alive", "keep-alive"))
        XCTAssertNil(ASCII.equalIgnoringCase("é", "ab"))
    }

    func testTrimmingMatchesFoundation() {
        for s in ["", " ", "\t x \t", "abc", "  abc", "abc  ", "a b", "\u{A0}nbsp\u{A0}", " \u{2003}em ", "\n x \n", "é "] {
            XCTAssertEqual(ASCII.trimmingWhitespace(Substring(s)), s.trimmingCharacters(in: .whitespaces), s.debugDescription)
        }
    }

    func testTargetDecodingMatchesHTTPKit() {
        let targets = ["/", "", "?", "?a=1", "/users", "/users/usr_ada?limit=5", "/users/usr%5Fada", "/users/%zz", "/a%20b/c?x=%2",
                       "/audit-events?limit=100&cursor=YzEuYWJj-_", "/u?q=ada+lovelace&q=a%2Bb&&=x&flag&e=&x==y",
                       "/u?q=%E6%97%A5%E6%9C%AC&bad=%ff", "/p?a=1?b=2", "/é?q=ü", "/a?x=\u{301}", "/users?email=Ada%40Example.com"]
        for t in targets {
            let r = HTTPRequestMessage(method: "GET", target: t)
            XCTAssertEqual(r.decodedPath, r.path, t)
            XCTAssertEqual(r.decodedQueryItems.map { "\($0.name)=\($0.value)" }, r.queryItems.map { "\($0.name)=\($0.value)" }, t)
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
