import Foundation
import XCTest

/// Every printed line and every `--json` event reaches its file
/// descriptor when it is made, not when the process ends.
final class StreamingOutputTests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// Prints, then spins until the deadline (3 s) stops it.
    static let printThenSpin = """
        recipe { name = "s" }
        print("first")
        print("second")
        while true do end
        """

    func testAPrintedLineIsReadableWhileTheRunGoesOn() throws {
        try cli.file("s.lua", Self.printThenSpin)
        let child = try cli.liveIsolated(["run", "s.lua", "--timeout", "3"])
        XCTAssertEqual(child.readLine(), "first")
        XCTAssertEqual(child.readLine(), "second")
        let seen = child.elapsed
        XCTAssertTrue(child.process.isRunning, "the line came only when the run ended")
        XCTAssertLessThan(seen, 2, "the line came \(seen) s after the start; the deadline is at 3 s")
        XCTAssertTrue(child.waitForExit(within: 10))
        XCTAssertEqual(child.readRest(), "")
        XCTAssertEqual(child.process.terminationStatus, 4)
        XCTAssertEqual(child.stderr,
                       "error: limit exceeded: timeout (3 s); raise it with --timeout or limits.timeout in the recipe manifest\n")
    }

    func testAJSONEventIsReadableWhileTheRunGoesOn() throws {
        try cli.file("s.lua", Self.printThenSpin)
        let child = try cli.liveIsolated(["run", "s.lua", "--timeout", "3", "--json"])
        XCTAssertEqual(JSONLines.withoutTimestamps(child.readLine() ?? "").first?.contains(#""type":"start""#), true)
        XCTAssertEqual(JSONLines.withoutTimestamps(child.readLine() ?? ""), [#"{"text":"first","type":"print"}"#])
        XCTAssertEqual(JSONLines.withoutTimestamps(child.readLine() ?? ""), [#"{"text":"second","type":"print"}"#])
        XCTAssertTrue(child.process.isRunning, "the event came only when the run ended")
        XCTAssertLessThan(child.elapsed, 2)
        XCTAssertTrue(child.waitForExit(within: 10))
        let rest = JSONLines.withoutTimestamps(child.readRest())
        XCTAssertEqual(rest.count, 2, "\(rest)")
        XCTAssertEqual(rest.first, #"{"kind":"limit.timeout","message":"limit exceeded: timeout (3 s); raise it with --timeout or limits.timeout in the recipe manifest","type":"error"}"#)
        XCTAssertTrue(rest.last?.contains(#""type":"summary""#) ?? false, "\(rest)")
        XCTAssertEqual(child.process.terminationStatus, 4)
    }

    func testLinesPrintedBeforeKillMinus9AreInStdout() throws {
        for json in [false, true] {
            try cli.file("s.lua", Self.printThenSpin)
            let out = cli.root.appendingPathComponent("stdout-\(json)")
            let child = try cli.liveIsolated(["run", "s.lua", "--timeout", "30"] + (json ? ["--json"] : []), stdoutFile: out)
            // --json: the start event, then the prints (compared without their timestamps).
            let expected = json ? "{\"text\":\"first\",\"type\":\"print\"}\n{\"text\":\"second\",\"type\":\"print\"}\n"
                                : "first\nsecond\n"
            func written() -> String {
                let text = (try? String(contentsOf: out, encoding: .utf8)) ?? ""
                guard json else { return text }
                let lines = text.split(separator: "\n").map(String.init)
                guard lines.first?.contains(#""type":"start""#) == true else { return text }
                return lines.dropFirst().map { JSONLines.timestamp.stringByReplacingMatches(
                    in: $0, range: NSRange($0.startIndex..., in: $0), withTemplate: "") + "\n" }.joined()
            }
            // Give the lines time to appear (they do within milliseconds), then kill.
            while child.elapsed < 5 {
                if written() == expected { break }
                usleep(20_000)
            }
            XCTAssertTrue(child.process.isRunning)
            child.killHard()
            XCTAssertEqual(child.process.terminationReason, .uncaughtSignal)
            XCTAssertEqual(written(), expected, json ? "--json" : "human")
        }
    }
}
