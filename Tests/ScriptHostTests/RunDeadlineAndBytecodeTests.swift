import Foundation
import XCTest
@testable import ScriptHost

/// The run's deadline thread (a POSIX thread per run) ends runs and leaves nothing
/// behind; the preludes load from bytecode while recipes can never load bytecode.
final class RunDeadlineAndBytecodeTests: RecipeTestCase {
    private func threadCount() -> Int {
        (try? FileManager.default.contentsOfDirectory(atPath: "/proc/self/task").count) ?? -1
    }

    /// Many runs in one process (listen, jobs) leave no deadline thread behind.
    func testManySequentialRunsLeaveNoThreads() {
        _ = harness.run("print(1)")   // warm up whatever the first run starts once
        usleep(50_000)
        let before = threadCount()
        for _ in 0..<200 { _ = harness.run("local x = 0 for i = 1, 10 do x = x + i end") }
        let deadline = Date().addingTimeInterval(2)
        var after = threadCount()
        while after > before && Date() < deadline { usleep(5_000); after = threadCount() }
        XCTAssertLessThanOrEqual(after, before, "threads before \(before), after 200 runs \(after)")
    }

    /// `disarm()`'s contract: neither action runs after it returns. A watchdog due at
    /// once and disarmed at once either ran its action before `disarm` returned, or
    /// never.
    func testNoActionRunsAfterDisarmReturns() throws {
        var late = 0
        for n in 0..<500 {
            let log = StampLog()
            let watchdog = try Watchdog(seconds: 0.001) { log.actionStarted() }
            usleep(UInt32(900 + (n * 37) % 300))   // around the deadline
            watchdog.disarm()
            log.disarmReturned()
            usleep(50)
            if log.actionStartedAfterDisarm { late += 1 }
        }
        XCTAssertEqual(late, 0, "actions that started after disarm() returned")
    }

    /// A tiny timeout still ends a busy loop with the timeout message, run after run.
    func testATinyTimeoutEndsABusyLoopEveryTime() {
        harness.limits.timeoutSeconds = 0.05
        for _ in 0..<5 {
            guard let outcome = runWithin(seconds: 3, "while true do end") else { return }
            XCTAssertEqual(outcome.failure?.kind, .limit(.timeout))
            XCTAssertEqual(outcome.message, LimitMessages.timeout("0.05 s"))
        }
    }

    /// A timeout of zero interrupts at once; the run neither hangs nor crashes.
    func testAZeroTimeoutEndsTheRun() {
        harness.limits.timeoutSeconds = 0
        guard let outcome = runWithin(seconds: 3, "while true do end") else { return }
        XCTAssertEqual(outcome.failure?.kind, .limit(.timeout), outcome.message)
    }

    /// An absurd timeout (the API caps it at the host ceiling) arms a thread that
    /// neither fires nor crashes converting the deadline.
    func testAnAbsurdTimeoutIsCappedAndHarmless() {
        harness.limits.timeoutSeconds = 1e300
        guard let outcome = runWithin(seconds: 3, "print('ok')") else { return }
        XCTAssertNil(outcome.failure, outcome.message)
        harness.limits.timeoutSeconds = .infinity
        guard let again = runWithin(seconds: 3, "print('ok')") else { return }
        XCTAssertNil(again.failure, again.message)
    }

    /// A binary chunk never loads from recipe code, whatever the route: text mode
    /// refuses it, and asking for another mode is an error of its own.
    func testBinaryChunksNeverLoad() {
        let refused = [
            #"local f, e = load("\27Lua\84\0") print(f == nil, e)"#,
            #"local i = 0 local f, e = load(function() i = i + 1 if i == 1 then return "\27" elseif i == 2 then return "Lua" end end) print(f == nil, e)"#,
        ]
        for source in refused {
            XCTAssertEqual(lines(source), ["true\tattempt to load a binary chunk (mode is 't')"], source)
        }
        for mode in ["b", "bt"] {
            let source = #"local ok, e = pcall(load, "\27Lua\84\0", "x", ""# + mode + #"") print(ok, e)"#
            XCTAssertEqual(lines(source), ["false\tload: only text chunks can be loaded in recipes (mode must be 't')"], source)
        }
        XCTAssertEqual(lines("print(string.dump)"), ["nil"])
    }

    /// A module file that starts with ESC is refused, not loaded as bytecode.
    func testAModuleFileThatIsBytecodeIsRefused() throws {
        try harness.write("evil.lua", "\u{1B}Lua\u{54}\u{00}rest")
        let outcome = harness.run("local ok, e = pcall(require, 'evil') print(ok, e ~= nil)")
        XCTAssertNil(outcome.failure, outcome.message)
        XCTAssertEqual(outcome.lines, ["false\ttrue"])
    }

    /// Tracebacks through prelude functions read as before the bytecode: the
    /// prelude's frames are left out by their source name, which the bytecode keeps
    /// ("=hubscript"), and the recipe's frames keep their lines.
    func testTracebacksThroughThePreludeShowOnlyTheRecipesFrames() throws {
        XCTAssertTrue(PreludeChunk.usesBytecode.main)
        let outcome = harness.run("local function f()\n  return no_such_global\nend\nf()")
        let failure = try XCTUnwrap(outcome.failure)
        XCTAssertEqual(failure.message, "recipes/t.lua:2: recipe attempted to access nonexistent global 'no_such_global'")
        XCTAssertEqual(failure.traceback, """
            stack traceback:
            \t[C]: in function 'error'
            \trecipes/t.lua:2: in local 'f'
            \trecipes/t.lua:4: in main chunk
            \t[C]: in ?
            """)
    }
}

private final class StampLog: @unchecked Sendable {
    private let lock = NSLock()
    private var disarmed = false
    private var late = false
    func actionStarted() { lock.withLock { if disarmed { late = true } } }
    func disarmReturned() { lock.withLock { disarmed = true } }
    var actionStartedAfterDisarm: Bool { lock.withLock { late } }
}
