import Foundation
import XCTest

/// `--timeout` values the CLI accepts (positive and finite) never crash the run: the
/// host caps them at 24 hours, and the journal records the cap.
final class TimeoutCapCLITests: XCTestCase {
    func testAHugeTimeoutRunsUnderTheCeiling() throws {
        let cli = try CLIHarness(testCase: self)
        let recipe = try cli.file("hello.lua", """
            recipe { name = "hello", version = "1.0.0", description = "hi", needs = {} }
            print("hi")
            """)
        let r = try cli.run(["run", recipe, "--timeout", "1e20", "--run-id", "run_huge"])
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "hi\n")
        let show = try cli.run(["runs", "show", "run_huge"], expect: 0)
        XCTAssertTrue(show.stdout.contains("timeout 86400 s"), show.stdout)
    }
}
