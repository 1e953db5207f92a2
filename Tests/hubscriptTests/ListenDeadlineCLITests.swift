import Foundation
import XCTest

/// Under `hubscript listen`, a trigger whose recipe loops for ever is stopped at its
/// deadline and recorded failed; the listener goes on serving.
extension ListenCLITests {
    func testALoopingTriggerIsStoppedAtItsDeadlineAndTheListenerGoesOn() throws {
        let s = try prepare()
        defer { s.sandbox.stop() }
        try s.cli.file("on-suspend.lua", """
            recipe { name = "on-suspend", version = "1.0.0", description = "Test fixture: never ends.",
                     params = { event = { type = "table" } }, limits = { timeout = 1 } }
            while true do end
            """)
        let (listener, listenURL) = try startListener(s)
        defer { listener.stop() }
        _ = try subscribe(s, listenURL)
        let run = try s.cli.run(["suspend-some.lua", "--profile", "lab", "--config", s.config])
        XCTAssertEqual(run.status, 0, run.output)
        XCTAssertTrue(waitUntil(30) { listener.output.components(separatedBy: "limit exceeded: timeout (1 s)").count - 1 >= 3 },
                      listener.output)
        XCTAssertTrue(listener.process.isRunning, listener.output)
        listener.stop()
        XCTAssertEqual(listener.process.terminationStatus, 0, listener.output)
    }
}

/// Under `hubscript test`, a recipe a test runs that loops for ever is stopped at its
/// deadline; the case reports it and the next case runs.
final class TestRunnerDeadlineCLITests: XCTestCase {
    func testALoopingRecipeInATestIsStoppedAtItsDeadline() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("t/loop.lua", """
            recipe { name = "loop", version = "1.0.0", description = "Test fixture: never ends.", limits = { timeout = 1 } }
            while true do end
            """)
        let test = try cli.file("t/loop_test.lua", """
            test.case("loops", function()
              local r = test.sandbox {}:run("loop.lua", {})
              expect(r).to_succeed()
            end)
            test.case("after", function() expect(1).to_be(1) end)
            """)
        let started = Date()
        let r = try cli.run(["test", test])
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertTrue(r.stdout.contains("FAIL \(test): loops\n"), r.stdout)
        XCTAssertTrue(r.stdout.contains("limit exceeded: timeout (1 s)"), r.stdout)
        XCTAssertTrue(r.stdout.contains("ok   \(test): after\n"), r.stdout)
        XCTAssertTrue(r.stdout.hasSuffix("1 passed, 1 failed\n"), r.stdout)
        XCTAssertLessThan(Date().timeIntervalSince(started), 20)
    }
}
