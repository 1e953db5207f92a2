import Foundation
import XCTest
import ScriptHost

/// Each run gets a fresh state: nothing leaks from one run to the next, neither
/// globals nor memory, and a run stopped by a limit leaves the process usable.
final class RunIsolationTests: RecipeTestCase {
    func testEveryLimitThenANormalRunInTheSameProcess() {
        harness.limits.instructions = 50_000_000
        let bombs: [(String, ScriptFailure.Kind)] = [
            (#"local t = { "x" } while true do t[#t + 1] = t[#t] .. t[#t] end"#, .limit(.memory)),
            ("local t = {} while true do t[#t + 1] = {} end", .limit(.memory)),
            ("while true do end", .limit(.instructions)),
            ("while true do pcall(function() while true do end end) end", .limit(.instructions)),
        ]
        for (source, kind) in bombs {
            XCTAssertEqual(harness.run(source).failure?.kind, kind, source)
            assertFreshRunWorks()
        }
    }

    func testRunsDoNotShareState() throws {
        try harness.write("lib/counter.lua", "local M = { n = 0 } function M.bump() M.n = M.n + 1 return M.n end return M")
        let source = #"local c = require("lib.counter") print(c.bump()) rawset(_ENV, "leftover", 1) string.extra = 1"#
        XCTAssertEqual(lines(source), ["1"])
        XCTAssertEqual(lines(source), ["1"])
        XCTAssertEqual(lines("print(rawget(_ENV, 'leftover'), string.extra)"), ["nil\tnil"])
    }

    func testReportCountsMemoryAndInstructions() {
        // Instructions are counted only under an instruction limit (exact counting
        // needs the count hook, see docs/architecture.md).
        harness.limits.instructions = 1_000_000_000
        let outcome = harness.run(#"local s = string.rep("z", 4 << 20) local n = 0 for i = 1, 100000 do n = n + i end"#)
        XCTAssertNil(outcome.failure)
        XCTAssertGreaterThanOrEqual(outcome.report.memoryPeakBytes, 4 << 20)
        XCTAssertLessThan(outcome.report.memoryPeakBytes, 32 << 20)
        XCTAssertGreaterThan(outcome.report.instructions, 100_000)
        XCTAssertEqual(outcome.report.exitCode, 0)
    }

    /// Resident set size of this process, from /proc/self/statm.
    private func residentBytes() throws -> Int {
        let text = try String(contentsOfFile: "/proc/self/statm", encoding: .utf8)
        let fields = text.split(separator: " ")
        let pages = Int(fields[1])!
        return pages * Int(sysconf(Int32(_SC_PAGESIZE)))
    }

    func testMemoryDoesNotLeakAcrossRuns() throws {
        // AddressSanitizer keeps freed memory in quarantine (256 MiB by default), so RSS
        // says nothing about leaks there; scripts/test-asan sets HUBSCRIPT_ASAN=1.
        if ProcessInfo.processInfo.environment["HUBSCRIPT_ASAN"] == "1" {
            throw XCTSkip("RSS growth is not measurable under AddressSanitizer (freed memory stays in its quarantine)")
        }
        harness.limits.memoryBytes = 64 << 20
        let source = #"""
        local t = {}
        for i = 1, 20 do t[i] = string.rep(string.char(64 + i), 1 << 20) end
        local list = {}
        for i = 1, 20000 do list[i] = { i, tostring(i) } end
        print(#t)
        """#
        XCTAssertEqual(lines(source), ["20"])   // warm up allocator and caches
        let before = try residentBytes()
        for _ in 1...30 {
            let outcome = harness.run(source)
            XCTAssertNil(outcome.failure, outcome.message)
            XCTAssertGreaterThan(outcome.report.memoryPeakBytes, 20 << 20)
        }
        let grown = try residentBytes() - before
        XCTAssertLessThan(grown, 50 << 20, "RSS grew by \(grown >> 20) MiB over 30 runs of ~21 MiB each")
    }
}

extension RunIsolationTests {
    private func runAndForget(_ source: String) -> (weakOutput: () -> MemoryOutput?, report: RunReport) {
        var output: MemoryOutput? = MemoryOutput()
        weak let weakOutput = output
        var configuration = RunConfiguration(output: output!)
        configuration.limits = RecipeHarness.smallLimits
        configuration.limits.timeoutSeconds = 600
        let report = ScriptRuntime.run(
            RecipeFile(displayPath: "t.lua", url: harness.folder.appendingPathComponent("t.lua"), source: source),
            configuration: configuration)
        configuration = RunConfiguration(output: MemoryOutput())
        output = nil
        return ({ weakOutput }, report)
    }

    func testFinishedRunIsNotRetainedByItsWatchdog() throws {
        // Regression: the watchdog's timer kept the run's output and plugins alive
        // until the deadline (an hour by default).
        let (weakOutput, report) = runAndForget(#"for i = 1, 1000 do print(string.rep("x", 1000)) end"#)
        XCTAssertNil(report.failure)
        XCTAssertNil(weakOutput())
    }
}
