import XCTest
final class ScriptHostTestsPlaceholder: XCTestCase { func testBuilds() {} }
