import Foundation
import XCTest

/// Runs the count hook cannot stop (one long C call, a finalizer, an error handler
/// that Lua runs with hooks off) end through the watchdog: the process prints the
/// timeout message and exits 4 about two seconds after the deadline.
final class CLIWatchdogTests: CLITestCase {
    private func assertWatchdogStops(_ body: String, stdout: String,
                                     file: StaticString = #filePath, line: UInt = #line) throws {
        try folder.write("w.lua", "recipe { name = \"w\" }\n" + body + "\n")
        let result = try hubscript("run", "w.lua", "--timeout", "1", timeout: 15)
        assertResult(result, stdout: stdout, stderr: CLITests.timeoutMessage, exitCode: 4, file: file, line: line)
        XCTAssertLessThan(result.seconds, 5, "the watchdog took \(result.seconds) s", file: file, line: line)
        XCTAssertGreaterThanOrEqual(result.seconds, 1, file: file, line: line)
    }

    func testRunawayPatternMatch() throws {
        try assertWatchdogStops("""
        print("start")
        local r = string.find(string.rep("a", 40), string.rep("a*", 20) .. "b")
        print("never", r)
        """, stdout: "start\n")
    }

    func testFinalizerLoopingAtClose() throws {
        try assertWatchdogStops("""
        local keep = setmetatable({}, { __gc = function() while true do end end })
        print("body done")
        """, stdout: "body done\n")
    }

    func testFinalizerLoopingDuringTheRun() throws {
        try assertWatchdogStops("""
        print("start")
        setmetatable({}, { __gc = function() while true do end end })
        for i = 1, 1e7 do local garbage = { i } end
        print("never")
        """, stdout: "start\n")
    }

    func testErrorHandlerLoopingAfterTheStopIsOnlyCaughtByTheWatchdog() throws {
        // See SandboxEscapeTests.testBUGErrorHandlerThatLoopsEscapesTheLimitHook: the
        // hook cannot stop this handler; only the watchdog ends the process.
        try assertWatchdogStops("""
        print("start")
        xpcall(function() while true do end end, function(e) while true do end end)
        """, stdout: "start\n")
    }
}
