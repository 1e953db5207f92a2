import XCTest
final class hubscriptTestsPlaceholder: XCTestCase { func testBuilds() {} }
