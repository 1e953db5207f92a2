import Foundation
import XCTest

/// The module reference is generated from the plugin declarations; the committed
/// copy must match, so the documentation never drifts from the code.
final class DocsTests: XCTestCase {
    func testModuleReferenceMatchesTheDeclarations() throws {
        let repo = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        // The test bundle sits in the products folder (Linux: the bundle URL is that folder).
        let bundle = Bundle(for: Self.self).bundleURL
        let binary = [bundle, bundle.deletingLastPathComponent()].map { $0.appendingPathComponent("hubscript") }
            .first { FileManager.default.isExecutableFile(atPath: $0.path) } ?? bundle.appendingPathComponent("hubscript")
        let process = Process()
        process.executableURL = binary
        process.arguments = ["docs", "modules"]
        let pipe = Pipe()
        process.standardOutput = pipe
        try process.run()
        let generated = String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        process.waitUntilExit()
        XCTAssertEqual(process.terminationStatus, 0)
        let committed = try String(contentsOf: repo.appendingPathComponent("docs/modules.md"), encoding: .utf8)
        XCTAssertEqual(generated, committed, "docs/modules.md is stale: run .build/debug/hubscript docs modules > docs/modules.md")
        XCTAssertTrue(generated.contains("| `hub.users.suspend` | `users.manage` | yes |"))
    }
}
