import Foundation
import XCTest

/// Runs the count hook cannot stop (one long C call, a finalizer, a write to a pipe
/// nobody reads) end through the watchdog: the process prints the timeout message and
/// exits 4 about two seconds after the deadline, whatever the Lua thread is blocked on.
final class CLIWatchdogTests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    static func timeoutMessage(_ seconds: Int) -> String {
        "limit exceeded: timeout (\(seconds) s); raise it with --timeout or limits.timeout in the recipe manifest"
    }

    private func assertWatchdogStops(_ body: String, stdout: String,
                                     file: StaticString = #filePath, line: UInt = #line) throws {
        try cli.file("w.lua", "recipe { name = \"w\" }\n" + body + "\n")
        let result = try cli.hubscript("run", "w.lua", "--timeout", "1", timeout: 15)
        assertResult(result, stdout: stdout, stderr: CLITests.timeoutMessage, exitCode: 4, file: file, line: line)
        XCTAssertLessThan(result.seconds, 5, "the watchdog took \(result.seconds) s", file: file, line: line)
        // The deadline is at 1 s and the watchdog acts at 3 s: a run that ends sooner
        // was stopped by the hook, and this test would not be about the watchdog.
        XCTAssertGreaterThanOrEqual(result.seconds, 2.8, "stopped before the watchdog", file: file, line: line)
    }

    func testRunawayPatternMatch() throws {
        try assertWatchdogStops("""
        print("start")
        local r = string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")
        print("never", r)
        """, stdout: "start\n")
    }

    /// The CLI leaves the run's Lua state to the process's exit
    /// (`RunConfiguration.leavesLuaStateToExit`): a finalizer that would loop when the
    /// state is closed never runs, and the run ends at once, successfully. (Where states
    /// are closed, in a process that runs many recipes, the watchdog covers it.)
    func testFinalizerLoopingAtCloseNeverRuns() throws {
        try cli.file("w.lua", """
            recipe { name = "w" }
            local keep = setmetatable({}, { __gc = function() while true do end end })
            print("body done")

            """)
        let result = try cli.hubscript("run", "w.lua", "--timeout", "1", timeout: 15)
        XCTAssertEqual(result.stdout, "body done\n")
        XCTAssertEqual(result.status, 0, result.stderrWithoutRunStart)
        XCTAssertLessThan(result.seconds, 2.5, "the run waited for the finalizer (the watchdog acts at 3 s)")
    }

    func testFinalizerLoopingDuringTheRun() throws {
        try assertWatchdogStops("""
        print("start")
        setmetatable({}, { __gc = function() while true do end end })
        for i = 1, 1e7 do local garbage = { i } end
        print("never")
        """, stdout: "start\n")
    }

    func testErrorHandlerStuckInOneCCallIsOnlyCaughtByTheWatchdog() throws {
        // A looping handler is stopped by the hook now (the stop is raised as a memory
        // error, for which Lua runs no handler: SandboxEscapeTests); a handler inside one
        // long C call never reaches an instruction where the hook could act.
        try assertWatchdogStops("""
        print("start")
        xpcall(function() error("boom") end, function(e)
          return string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")
        end)
        print("never")
        """, stdout: "start\n")
    }

    // MARK: Blocked on output

    /// Prints until stdout's pipe is full; nobody reads it.
    static let flood = """
        recipe { name = "flood" }
        while true do print(string.rep("x", 1000)) end
        """

    func testAStdoutPipeNobodyReadsStillEndsTheRun() throws {
        try cli.file("flood.lua", Self.flood)
        let child = try cli.liveIsolated(["run", "flood.lua", "--timeout", "2"])
        XCTAssertTrue(child.waitForExit(within: 8), "still running after \(child.elapsed) s: the watchdog waited on stdout")
        let seconds = child.elapsed
        XCTAssertEqual(child.process.terminationStatus, 4)
        XCTAssertLessThan(seconds, 6)
        XCTAssertGreaterThanOrEqual(seconds, 3.8)
        XCTAssertEqual(child.stderr, "error: \(Self.timeoutMessage(2))\n")
    }

    func testAStdoutPipeNobodyReadsUnderJSONReportsOnStderr() throws {
        try cli.file("flood.lua", Self.flood)
        let child = try cli.liveIsolated(["run", "flood.lua", "--timeout", "2", "--json"])
        XCTAssertTrue(child.waitForExit(within: 8), "still running after \(child.elapsed) s")
        XCTAssertEqual(child.process.terminationStatus, 4)
        XCTAssertLessThan(child.elapsed, 6)
        // The events cannot get through stdout, so the error goes to stderr as text.
        XCTAssertEqual(child.stderr, "error: \(Self.timeoutMessage(2))\n")
    }

    // MARK: --json

    func testTheWatchdogEmitsTheJSONSummary() throws {
        try cli.file("w.lua", """
        recipe { name = "w" }
        print("start")
        local r = string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")
        """)
        let result = try cli.hubscript("run", "w.lua", "--timeout", "1", "--json", timeout: 15)
        XCTAssertEqual(result.status, 4)
        XCTAssertEqual(result.stderrWithoutRunStart, "")
        XCTAssertGreaterThanOrEqual(result.seconds, 2.8)
        let lines = Array(JSONLines.withoutTimestamps(result.stdout).dropFirst())
        XCTAssertEqual(lines.count, 3, result.stdout)
        guard lines.count == 3 else { return }
        XCTAssertEqual(lines[0], #"{"text":"start","type":"print"}"#)
        XCTAssertEqual(lines[1], #"{"kind":"limit.timeout","message":"\#(Self.timeoutMessage(1))","type":"error"}"#)
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any])
        // The same fields as a normal run's summary.
        XCTAssertEqual(Set(summary.keys), ["type", "status", "exit_code", "run_id", "reads", "reads_replayed", "writes", "replayed",
                                           "planned", "failed", "duration_ms", "memory_peak_bytes", "exports", "output_folder",
                                           "schema_version"])
        XCTAssertEqual(summary["type"] as? String, "summary")
        XCTAssertEqual(summary["status"] as? String, "failed")
        XCTAssertEqual(summary["exit_code"] as? Int, 4)
        XCTAssertEqual(summary["writes"] as? Int, 0)
        XCTAssertEqual((summary["exports"] as? [Any])?.count, 0)
        XCTAssertTrue((summary["run_id"] as? String)?.hasPrefix("run_") ?? false)
        let milliseconds = try XCTUnwrap(summary["duration_ms"] as? Int)
        XCTAssertTrue((2_800...5_000).contains(milliseconds), "duration_ms \(milliseconds)")
        XCTAssertGreaterThan(try XCTUnwrap(summary["memory_peak_bytes"] as? Int), 0)
    }
}
