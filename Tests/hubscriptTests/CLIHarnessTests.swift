import Foundation
import XCTest

/// The one harness CLI tests start the binary through: which binary it runs, what it
/// does when that binary is missing, and how it reads a run's stderr.
final class CLIHarnessTests: XCTestCase {
    func testTheBinaryUnderTestIsTheOneTheEnvironmentNames() {
        XCTAssertEqual(CLIHarness.binary(environment: ["HUBSCRIPT_TEST_BINARY": "/opt/release/hubscript"]).path,
                       "/opt/release/hubscript")
        XCTAssertEqual(CLIHarness.binary(environment: ["HUBSCRIPT_TEST_BINARY": ""]), CLIHarness.debugBinary)
        XCTAssertEqual(CLIHarness.binary(environment: [:]), CLIHarness.debugBinary)
    }

    func testAMissingBinaryFailsUnderCIAndSkipsElsewhere() throws {
        let missing = URL(fileURLWithPath: "/nonexistent/hubscript-\(UUID().uuidString)")
        let message = "the hubscript binary is not built at \(missing.path) (run 'swift build' first)"
        XCTAssertThrowsError(try CLIHarness.requireBinary(at: missing, environment: ["CI": "true"])) { error in
            XCTAssertEqual((error as? CLIHarness.MissingBinary)?.description, message)
        }
        XCTAssertThrowsError(try CLIHarness.requireBinary(at: missing, environment: [:])) { error in
            XCTAssertTrue(error is XCTSkip, "\(error)")
            XCTAssertFalse(error is CLIHarness.MissingBinary)
        }
        let present = URL(fileURLWithPath: "/bin/sh")
        XCTAssertNoThrow(try CLIHarness.requireBinary(at: present, environment: ["CI": "true"]))
    }

    func testStderrWithoutRunStartDropsOnlyTheRunStartLines() {
        let started = "run run_1 started; if it stops, resume it with: hubscript runs resume run_1\n"
        let retried = "run run_1 started (attempt 2); if it stops, resume it with: hubscript runs resume run_1\n"
        let result = CLIHarness.Result(status: 0, stdout: "",
                                       stderr: started + "warning: slow\n" + retried + "plan plan_9 started\ndone\n")
        XCTAssertEqual(result.stderrWithoutRunStart, "warning: slow\ndone\n")
        XCTAssertEqual(result.stderr, started + "warning: slow\n" + retried + "plan plan_9 started\ndone\n")
        // A line that only looks like one (another run id in the hint) stays.
        let other = "run run_1 started; if it stops, resume it with: hubscript runs resume run_2\n"
        XCTAssertEqual(CLIHarness.Result(status: 0, stdout: "", stderr: other).stderrWithoutRunStart, other)
    }

    func testAnIsolatedRunSeesNoVariableOfTheCallersAndAConfigurationNamingTheSandbox() throws {
        let cli = try CLIHarness(testCase: self)
        setenv("HUBSCRIPT_PROFILE", "elsewhere", 1)
        defer { unsetenv("HUBSCRIPT_PROFILE") }
        try cli.file("env.lua", """
            recipe { name = "env", version = "1.0.0" }
            print("ran")
            """)
        // With the caller's variable, the run would look for a profile 'elsewhere'.
        let r = try cli.hubscript("run", "env.lua")
        assertResult(r, stdout: "ran\n", stderr: "", exitCode: 0)
    }
}
