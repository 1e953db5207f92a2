import Foundation
import XCTest

// Runs of the binary with the arguments exactly as written — no `--state-dir` added —
// in the harness folder, each in a fresh isolated environment whose configuration names
// the built-in sandbox (`CLIHarness.isolatedEnvironment`): for tests of argument
// parsing, messages and output, where nothing outlives one run.
extension CLIHarness {
    /// Runs `hubscript args…` in the harness folder; kills it after `timeout` seconds.
    func hubscript(_ args: String..., timeout: Double = 20) throws -> Result {
        try Self.run(args, in: root, timeout: timeout)
    }

    /// Runs `hubscript args…` in the repository root (for the shipped recipes).
    func hubscriptInRepo(_ args: String...) throws -> Result {
        try Self.run(args, in: Self.repoRoot)
    }

    /// Starts `hubscript args…` in the harness folder with stdout read line by line as
    /// it comes; with `stdoutFile`, stdout goes to that file instead.
    func liveIsolated(_ args: [String], stdoutFile: URL? = nil) throws -> LiveProcess {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-live-\(UUID().uuidString)")
        let environment = try Self.isolatedEnvironment(scratch: scratch)
        return try LiveProcess(process: Self.process(args, in: root, environment: environment), scratch: scratch,
                               stdoutFile: stdoutFile)
    }
}

extension XCTestCase {
    /// Fails unless the run wrote exactly `stdout` and `stderr` (its run start line
    /// aside, `RunStartLine`) and exited with `exitCode`.
    func assertResult(_ result: CLIHarness.Result, stdout: String, stderr: String, exitCode: Int32,
                      file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.stdout, stdout, "stdout", file: file, line: line)
        XCTAssertEqual(result.stderrWithoutRunStart, stderr, "stderr", file: file, line: line)
        XCTAssertEqual(result.status, exitCode, "exit code", file: file, line: line)
    }
}
