import XCTest
final class HubBindingsTestsPlaceholder: XCTestCase { func testBuilds() {} }
