import Foundation
import XCTest

/// Output that could not be written — stdout on a full disk, a closed pipe, a closed
/// descriptor — is reported on stderr and the command exits 6 (a command that failed
/// keeps its own code), never 0 behind a truncated file.
final class OutputLostCLITests: XCTestCase {
    var cli: CLIHarness!
    var recipe: String!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        recipe = try cli.file("p.lua", """
            recipe { name = "p", version = "1.0.0", description = "d" }
            for i = 1, 3 do print("line " .. i) end
            """)
    }

    /// Runs `args` with stdout on `stdout`; stderr and the status.
    func run(_ args: [String], stdout: Any) throws -> (status: Int32, stderr: String) {
        let p = cli.configured(args)
        p.standardOutput = stdout
        let err = Pipe()
        p.standardError = err
        try p.run()
        let text = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .exit, "killed by signal \(p.terminationStatus)")
        return (p.terminationStatus, String(decoding: text, as: UTF8.self))
    }

    func lostLine(_ bytes: Int, _ reason: String) -> String {
        "hubscript: output lost: \(bytes) bytes could not be written to stdout (\(reason)); what the command printed is "
            + "incomplete. Send stdout to a file on a disk with room, or to a reader that stays until hubscript ends "
            + "(a run's outcome is kept in the journal: hubscript runs list)"
    }

    func lastLine(_ text: String) -> String { text.split(separator: "\n").last.map(String.init) ?? "" }

    func testAFullDiskIsReportedWithExitCode6() throws {
        let full = try XCTUnwrap(FileHandle(forWritingAtPath: "/dev/full"))
        let text = try run(["run", recipe], stdout: full)
        XCTAssertEqual(text.status, 6, text.stderr)
        XCTAssertEqual(lastLine(text.stderr), lostLine(21, "No space left on device"))

        let json = try run(["run", recipe, "--json"], stdout: full)
        XCTAssertEqual(json.status, 6, json.stderr)
        XCTAssertTrue(lastLine(json.stderr).hasPrefix("hubscript: output lost: "), json.stderr)
        XCTAssertTrue(lastLine(json.stderr).contains(" bytes could not be written to stdout (No space left on device)"), json.stderr)

        let list = try run(["runs", "list"], stdout: full)
        XCTAssertEqual(list.status, 6, list.stderr)
        XCTAssertTrue(lastLine(list.stderr).contains("could not be written to stdout (No space left on device)"), list.stderr)
    }

    /// A reader that went away: the process is not killed by SIGPIPE; it finishes the
    /// run and says what was lost.
    func testAClosedPipeIsReportedNotASilentDeath() throws {
        let pipe = Pipe()
        try pipe.fileHandleForReading.close()
        let r = try run(["run", recipe], stdout: pipe.fileHandleForWriting)
        XCTAssertEqual(r.status, 6, r.stderr)
        XCTAssertEqual(lastLine(r.stderr), lostLine(21, "Broken pipe"))
        XCTAssertEqual(try cli.run(["runs", "list", "--json"], expect: 0).stdout.components(separatedBy: "\"status\":\"succeeded\"").count, 2,
                       "the run itself finished")
    }

    func testAClosedStdoutIsReported() throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/bin/sh")
        p.arguments = ["-c", "exec \"$0\" run \"$1\" --state-dir \"$2\" >&-", CLIHarness.binary.path, recipe, cli.stateDir.path]
        p.environment = cli.environment
        let err = Pipe()
        p.standardError = err
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        XCTAssertEqual(p.terminationStatus, 6, text)
        XCTAssertEqual(lastLine(text), lostLine(21, "Bad file descriptor"))
    }

    /// A run that failed keeps its exit code; the loss is still said.
    func testAFailedRunKeepsItsCodeAndTheLossIsSaid() throws {
        let failing = try cli.file("f.lua", """
            recipe { name = "f", version = "1.0.0", description = "d" }
            print("before")
            error("boom")
            """)
        let full = try XCTUnwrap(FileHandle(forWritingAtPath: "/dev/full"))
        let r = try run(["run", failing], stdout: full)
        XCTAssertEqual(r.status, 1, r.stderr)
        XCTAssertEqual(lastLine(r.stderr), lostLine(7, "No space left on device"))
    }

    func testOutputThatArrivedIsNoError() throws {
        let r = try cli.run(["run", recipe], expect: 0)
        XCTAssertEqual(r.stdout, "line 1\nline 2\nline 3\n")
        XCTAssertFalse(r.stderr.contains("output lost"), r.stderr)
    }
}
