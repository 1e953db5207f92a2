import Foundation
import XCTest

/// recipes/README.md's rotate-api-key steps (serve the sandbox, a session profile, a
/// vault, login, the run), executed as written — only the binary, the throwaway folder
/// and the port are this test's — and compared with the output the README shows.
final class RotateApiKeyReadmeCLITests: XCTestCase {
    /// The fenced blocks of the README's `## rotate-api-key` section, in order.
    static func blocks() throws -> [String] {
        let readme = try String(contentsOf: CLIHarness.repoRoot.appendingPathComponent("recipes/README.md"), encoding: .utf8)
        let section = try XCTUnwrap(readme.components(separatedBy: "\n## rotate-api-key\n").dropFirst().first?
            .components(separatedBy: "\n## ").first)
        let parts = section.components(separatedBy: "```")
        // Odd parts are inside fences: "sh\n…" or "\n…".
        return stride(from: 1, to: parts.count, by: 2).map { parts[$0] }
    }

    func testTheDocumentedStepsRotateAKeyAsShown() throws {
        let cli = try CLIHarness(testCase: self)
        let blocks = try Self.blocks()
        XCTAssertEqual(blocks.count, 3, "expected the server block, the steps and their output")
        guard blocks.count == 3 else { return }
        let folder = cli.root.appendingPathComponent("hs-me").path
        func localized(_ text: String) -> String {
            text.replacingOccurrences(of: "scripts/hubscript", with: CLIHarness.binary.path)
                .replacingOccurrences(of: "/tmp/hs-me", with: folder)
        }
        let server = blocks[0].dropFirst("sh\n".count).split(separator: "\n").filter { !$0.hasPrefix("#") }.map(String.init)
        XCTAssertEqual(server, ["scripts/hubscript sandbox reset --state-dir /tmp/hs-me",
                                "scripts/hubscript sandbox serve --port 8470 --state-dir /tmp/hs-me"])
        let reset = try EditorDefinitionsTests.exec("/bin/bash", ["-c", localized(server[0])], in: CLIHarness.repoRoot,
                                                   environment: cli.environment)
        XCTAssertEqual(reset.0, 0, reset.1)

        // The server, on a free port (8470 may be taken here), as the README starts it.
        let serve = localized(server[1]).replacingOccurrences(of: "--port 8470", with: "--port 0 --dispatch-port 0")
        let process = CLIHarness.process(Array(serve.split(separator: " ").dropFirst().map(String.init)),
                                         in: CLIHarness.repoRoot, environment: cli.environment)
        let out = Pipe()
        process.standardOutput = out
        try process.run()
        defer {
            process.terminate()
            process.waitUntilExit()
        }
        var banner = ""
        while !banner.contains("Ctrl-C stops.") {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            banner += String(decoding: chunk, as: UTF8.self)
        }
        let url = try XCTUnwrap(banner.split(whereSeparator: { $0 == " " || $0 == "\n" })
            .first { $0.hasPrefix("http://127.0.0.1:") }, banner)

        let steps = localized(String(blocks[1].dropFirst("sh\n".count)))
            .replacingOccurrences(of: "http://127.0.0.1:8470", with: String(url))
        let (status, output) = try EditorDefinitionsTests.exec("/bin/bash", ["-e", "-c", steps + "\nexit 0\n"],
                                                             in: CLIHarness.repoRoot, environment: cli.environment)
        XCTAssertEqual(status, 0, output)
        // stdout and stderr together: the steps' stdout lines, then hubscript's notes on stderr.
        let shown = blocks[2].dropFirst().description
        let printed = output.replacingOccurrences(of: folder, with: "/tmp/hs-me")
            .replacingOccurrences(of: #"key_[a-z0-9]+ \("#, with: "key_… (", options: .regularExpression)
            .split(separator: "\n").filter { !$0.hasPrefix("run run_") && !$0.hasPrefix("done: run ") }
            .joined(separator: "\n") + "\n"
        XCTAssertEqual(printed, shown)
    }
}
