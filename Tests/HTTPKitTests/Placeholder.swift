import XCTest
final class HTTPKitTestsPlaceholder: XCTestCase { func testBuilds() {} }
