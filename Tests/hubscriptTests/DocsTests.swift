import Foundation
import XCTest

/// The module reference is generated from the plugin declarations; the committed
/// copy must match, so the documentation never drifts from the code.
final class DocsTests: XCTestCase {
    func testModuleReferenceMatchesTheDeclarations() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        let done = try CLIHarness.collect(CLIHarness.process(["docs", "modules"], in: repo,
                                                                         environment: ProcessInfo.processInfo.environment))
        let generated = String(decoding: done.stdout, as: UTF8.self)
        XCTAssertEqual(done.status, 0)
        let committed = try String(contentsOf: repo.appendingPathComponent("docs/modules.md"), encoding: .utf8)
        XCTAssertEqual(generated, committed, "docs/modules.md is stale: run .build/debug/hubscript docs modules > docs/modules.md")
        XCTAssertTrue(generated.contains("| `hub.users.suspend` | `users.manage` | yes |"))
    }
}
