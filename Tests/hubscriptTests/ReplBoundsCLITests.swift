import Foundation
import XCTest

/// A session fed a paste that never ends its chunk, and a session's run afterwards: an
/// unfinished chunk is bounded (its lines are compiled again at each line), and past
/// the bound the session ends before any later line runs out of its context; a session
/// is journalled but cannot be resumed (its lines are not kept), and says so.
final class ReplBoundsCLITests: XCTestCase {
    static let tooLong = "error: limit exceeded: an unfinished chunk grew past 1024 KiB or 1000 lines; the session ends here, nothing after it ran. Put a long chunk in a file and require it\n"

    func testAnUnfinishedChunkPastItsLineBoundEndsTheSessionBeforeItsTailRuns() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.resetSandbox()
        let body = String(repeating: "  print('inside')\n", count: 1000)
        let input = "1\nif false then\n" + body + "  hub.users.suspend('usr_ada', { reason = 'x' })\nend\nprint('after')\n"
        let r = try cli.run(["repl", "--apply", "--quiet"], input: input)
        XCTAssertEqual(r.status, 4, String(r.output.prefix(2000)))
        XCTAssertEqual(r.stdout, "1\n", "neither the chunk nor the lines after it ran")
        XCTAssertEqual(r.stderrWithoutRunStart, Self.tooLong)
        XCTAssertEqual(try cli.sandbox().get("/users/usr_ada").string("status"), "active")
    }

    func testAnUnfinishedChunkPastItsByteBoundEndsTheSession() throws {
        let cli = try CLIHarness(testCase: self)
        let half = String(repeating: "a", count: 600 << 10)
        let r = try cli.run(["repl", "--quiet"], input: "x = [[\n\(half)\n\(half)\n]]\n#x\n")
        XCTAssertEqual(r.status, 4, String(r.output.prefix(2000)))
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.stderrWithoutRunStart, Self.tooLong)
        let under = try cli.run(["repl", "--quiet"], input: "x = [[\n\(half)\n]]\n#x\n")
        XCTAssertEqual(under.status, 0, String(under.output.prefix(2000)))
        XCTAssertEqual(under.stdout, "\(600 << 10 + 1)\n", "a chunk under the bound runs")
    }

    func testASessionCannotBeResumedAndItsStartLineDoesNotOfferTo() throws {
        let cli = try CLIHarness(testCase: self)
        for (args, input) in [(["eval", "state.set('k', 1)", "--apply", "--verbose"], nil), (["repl", "--apply"], "state.set('k', 2)\n")] {
            let r = try cli.run(args, input: input)
            XCTAssertEqual(r.status, 0, r.output)
            let started = try XCTUnwrap(r.stderr.split(separator: "\n").first { $0.hasPrefix("run ") }, r.stderr)
            let id = String(started.split(separator: " ")[1])
            XCTAssertEqual(started, "run \(id) started")
            let resume = try cli.run(["runs", "resume", id], input: "state.set('k', 3)\n")
            XCTAssertEqual(resume.status, 2, resume.output)
            XCTAssertEqual(resume.stdout, "")
            XCTAssertEqual(resume.stderr, "error: run \(id) is a hubscript eval or repl session, which cannot be resumed (its lines are not kept); hubscript runs show \(id) lists the writes it sent\n")
        }
        XCTAssertEqual(try cli.run(["eval", "state.get('k')"]).stdout, "2\n")
    }

    func testLinesAreReadWholeWhateverTheirNumberSizeAndEnding() throws {
        let cli = try CLIHarness(testCase: self)
        let counting = String(repeating: "n = n + 1\n", count: 10_000)
        let long = "n = 0 -- " + String(repeating: "a", count: 3 << 20) + "\n"
        let input = "n = 0\n" + counting + long + counting + "\r\n\n" + counting + "n + 0\r\nn"
        let r = try cli.run(["repl", "--quiet"], input: input)
        XCTAssertEqual(r.status, 0, String(r.output.prefix(2000)))
        XCTAssertEqual(r.stdout, "30000\n30000\n", "the overlong line is skipped; CRLF, blank lines and a last line without a newline are read")
        XCTAssertEqual(r.stderrWithoutRunStart, "error: a line longer than 1 MiB was skipped\n")
    }
}
