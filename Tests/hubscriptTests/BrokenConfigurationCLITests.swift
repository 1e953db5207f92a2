import Foundation
import XCTest

/// A configuration file that cannot be read, or that has a mistake in any part, is
/// reported by every command that reads it (exit 2, the file and the mistake named),
/// never skipped as if there were no file.
final class BrokenConfigurationCLITests: XCTestCase {
    var cli: CLIHarness!
    var config: String!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        config = try cli.file("c.lua", "return { profiles = ")
        try cli.file("targets.lua", #"recipe { name = "targets", targets = { "ops" } } print(1)"#)
        try cli.file("plain.lua", #"recipe { name = "plain" } print(1)"#)
    }

    /// `hubscript describe …` (which takes no `--state-dir`) in the test's folder.
    func describe(_ args: String...) throws -> CLIHarness.Result {
        let done = try CLIHarness.collect(CLIHarness.process(["describe"] + args, in: cli.root, environment: cli.environment))
        return CLIHarness.Result(status: done.status, stdout: String(decoding: done.stdout, as: UTF8.self),
                                 stderr: String(decoding: done.stderr, as: UTF8.self))
    }

    var syntaxError: String { "config \(config!): c.lua:1: unexpected symbol near <eof>" }

    func testDescribeSaysTheConfigurationErrorWhenItNeedsTheConfiguration() throws {
        let r = try describe("targets.lua", "--config", config)
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.stderr, "hubscript describe: \(syntaxError)\n")
        // A recipe without targets is described from the recipe alone.
        let plain = try describe("plain.lua", "--config", config)
        XCTAssertEqual(plain.status, 0, plain.output)
        XCTAssertTrue(plain.stdout.hasPrefix("plain\n"), plain.stdout)
    }

    func testDescribeSaysAProfileTheConfigurationDoesNotDefine() throws {
        let fine = try cli.file("fine.lua", "return { profiles = { lab = { sandbox = true } } }")
        let r = try describe("targets.lua", "--config", fine, "--profile", "nope")
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "hubscript describe: no profile 'nope' in \(fine) (profiles: lab, or 'sandbox')\n")
    }

    func testALibraryRecipesHelpSaysTheConfigurationError() throws {
        for args in [["ops:offboard", "--help"], ["run", "ops:offboard", "--help"]] {
            let r = try cli.run(args + ["--config", config])
            XCTAssertEqual(r.status, 2, "\(args)")
            XCTAssertEqual(r.stdout, "", "\(args)")
            XCTAssertEqual(r.stderr, "hubscript run: \(syntaxError)\n", "\(args)")
        }
        // With the file mended, an unknown library is said as a run would say it.
        let fine = try cli.file("fine.lua", "return { profiles = { lab = { sandbox = true } } }")
        let r = try cli.run(["ops:offboard", "--help", "--config", fine])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, """
            hubscript run: ops:offboard names a recipe of library 'ops', and the configuration has no libraries (libraries = { ops = "folder" })
            Run 'hubscript run --help' for usage.

            """)
    }

    func testRecipeTestsSayTheConfigurationError() throws {
        try cli.file("tests/a_test.lua", #"test("a", function() end)"#)
        let r = try cli.run(["test", cli.root.appendingPathComponent("tests").path, "--config", config])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "hubscript test: \(syntaxError)\n")
    }

    /// The whole file is validated at every command's start: a job whose recipe is
    /// gone stops a run that does not use the job, with the job named.
    func testAMistakeInAnyPartStopsEveryCommand() throws {
        let jobs = try cli.file("jobs.lua", """
            return { profiles = { lab = { sandbox = true } }, jobs = { nightly = { recipe = "gone.lua", schedule = "@daily" } } }
            """)
        let message = #"config \#(jobs): job "nightly": recipe "gone.lua" is not a file (looked for \#(cli.root.path)/gone.lua; a recipe path is relative to the config file's folder)"#
        for command in [["run", "plain.lua"], ["runs", "list"], ["jobs", "list"]] {
            let r = try cli.run(command + ["--config", jobs])
            XCTAssertEqual(r.status, 2, "\(command)")
            XCTAssertEqual(r.stderr, "hubscript \(command[0] == "run" ? "run" : command.joined(separator: " ")): \(message)\n", "\(command)")
        }
    }
}
