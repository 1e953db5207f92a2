import SystemText
import XCTest

final class URLUserInfoTests: XCTestCase {
    func testTheUserAndPasswordOfAURLAreHidden() {
        XCTAssertEqual(URLUserInfo.hidden("http://alice:s3cret@proxy:3128"), "http://***@proxy:3128")
        XCTAssertEqual(URLUserInfo.hidden("http://token@proxy:3128/"), "http://***@proxy:3128/")
        XCTAssertEqual(URLUserInfo.hidden("alice:s3cret@proxy:3128"), "***@proxy:3128", "libcurl takes a proxy without a scheme")
        XCTAssertEqual(URLUserInfo.hidden("http://a:p@ss@proxy:3128"), "http://***@proxy:3128", "an unencoded @ in the password")
        XCTAssertEqual(URLUserInfo.hidden("socks5h://u:p%40x@10.0.0.1:1080"), "socks5h://***@10.0.0.1:1080")
    }

    func testAURLWithoutUserInformationIsUnchanged() {
        for text in ["http://proxy:3128", "https://hub.example.com/path/a@b", "https://hub.example.com/?q=a@b", "proxy:3128",
                     "http://hub#x@y", ""] {
            XCTAssertEqual(URLUserInfo.hidden(text), text)
        }
    }
}
