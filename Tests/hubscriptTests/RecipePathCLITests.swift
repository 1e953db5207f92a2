import Foundation
import XCTest

/// The recipe paths the CLI reads and records: a file that never ends is refused, and a
/// relative path recorded by a run still finds the recipe when resumed from elsewhere.
final class RecipePathCLITests: XCTestCase {
    /// `hubscript run /dev/zero` fails at once with what went wrong (it used to read
    /// until memory ran out and abort).
    func testADeviceThatNeverEndsIsRefused() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["run", "/dev/zero"])
        XCTAssertEqual(r.status, 2, r.output)
        XCTAssertEqual(r.stderr, "error: cannot read /dev/zero: it is longer than 8 MiB; a recipe may be at most 8 MiB\n")
    }

    /// A relative recipe path with `.`, `..` and `//`, and a relative state folder with a
    /// trailing slash: the journal records the recipe's absolute path, so a resume from
    /// another folder finds it.
    func testAResumeFromAnotherFolderFindsARecipeGivenRelatively() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("work/r/hello.lua", """
            recipe { name = "hello", version = "1.0.0", description = "hi", needs = {} }
            if state.get("stopped") == nil then
              state.set("stopped", true)
              error("the first pass stops here", 0)
            end
            print("hi")
            """)
        try cli.file("elsewhere/.keep", "")
        let work = cli.root.appendingPathComponent("work")
        let elsewhere = cli.root.appendingPathComponent("elsewhere")
        let state = cli.root.appendingPathComponent("state")
        func run(_ args: [String], in folder: URL) throws -> CLIHarness.Result {
            let p = Process()
            p.executableURL = cli.binary
            p.arguments = args
            p.environment = cli.environment
            p.currentDirectoryURL = folder
            let done = try CLIHarness.collect(p)
            return CLIHarness.Result(status: done.status, stdout: String(decoding: done.stdout, as: UTF8.self),
                                     stderr: String(decoding: done.stderr, as: UTF8.self))
        }
        let first = try run(["run", "./r/../r//hello.lua", "--state-dir", "../state/", "--run-id", "run_rel"], in: work)
        XCTAssertEqual(first.status, 1, first.output)
        let show = try run(["runs", "show", "run_rel", "--state-dir", state.path], in: elsewhere)
        XCTAssertTrue(show.stdout.contains("recipe    \(work.path)/r/hello.lua (sha256 "), show.output)
        let resumed = try run(["runs", "resume", "run_rel", "--state-dir", "../state"], in: elsewhere)
        XCTAssertEqual(resumed.status, 0, resumed.output)
        XCTAssertEqual(resumed.stdout, "hi\n", resumed.output)
    }
}
