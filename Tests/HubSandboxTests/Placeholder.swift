import XCTest
final class HubSandboxTestsPlaceholder: XCTestCase { func testBuilds() {} }
