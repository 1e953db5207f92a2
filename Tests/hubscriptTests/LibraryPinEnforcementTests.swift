import Foundation
import XCTest

/// Library pins hold as docs/libraries.md promises: "require checks each library module
/// against its pin once more as it loads it, so a file replaced after the run started
/// is refused too", and "a tampered checkout is never trusted": a pin that can be
/// sidestepped would run code nobody reviewed.
final class LibraryPinEnforcementTests: XCTestCase {
    var cli: CLIHarness!
    var config: String!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
    }

    func hubscript(_ args: String...) throws -> CLIHarness.Result { try cli.run(args + ["--config", config]) }

    /// A library recipe that prints `ready`, spins about a second (the window in which
    /// the test changes the library), then requires `module`.
    func slowRecipe(requiring module: String) -> String {
        """
        recipe { name = "slow" }
        print("ready")
        for i = 1, 300000000 do end
        print(require("\(module)").text)
        """
    }

    /// Runs `ops:slow` and, once it printed `ready`, calls `change`; returns its stdout
    /// after `ready`.
    func runSlow(changing change: () throws -> Void) throws -> String {
        let live = try cli.live(["ops:slow", "--config", config])
        XCTAssertEqual(live.readLine(), "ready")
        try change()
        let rest = live.readRest()
        XCTAssertTrue(live.waitForExit(within: 30))
        return rest
    }

    func setUpLibrary(requiring module: String) throws {
        try cli.file("shared/ops/slow.lua", slowRecipe(requiring: module))
        try cli.file("shared/ops/words.lua", "return { text = 'pinned words' }\n")
        config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, libraries = { ops = "shared/ops" } }
            """)
        XCTAssertEqual(try hubscript("trust").status, 0)
    }

    /// `require("ops.words")` from a library recipe looks in the recipe's own folder
    /// first (`shared/ops/ops/words.lua`), where no pin is checked as it loads: a file
    /// planted there after the run started shadows the pinned module and runs.
    /// Expected: it is refused (it is a library file with no pin), as the same file
    /// planted before the run is.
    func testAModulePlantedInTheLibraryAfterTheRunStartedIsRefused() throws {
        try setUpLibrary(requiring: "ops.words")
        let out = try runSlow {
            try cli.file("shared/ops/ops/words.lua", "return { text = 'PLANTED' }\n")
        }
        XCTAssertFalse(out.contains("PLANTED"), "an unpinned library file ran: \(out)")
    }

    /// `require("words")` from a library recipe finds the library's `words.lua` through
    /// the recipe's own folder, without the load-time pin check: replaced after the run
    /// started, the new bytes run. Expected: refused, as `require("ops.words")` is
    /// (`library file ops/words.lua changed while the run was starting`).
    func testASiblingModuleReplacedAfterTheRunStartedIsRefused() throws {
        try setUpLibrary(requiring: "words")
        let out = try runSlow {
            try cli.file("shared/ops/words.lua", "return { text = 'REPLACED' }\n")
        }
        XCTAssertFalse(out.contains("REPLACED"), "a library file changed after its pin was checked ran: \(out)")
    }
}

extension LibraryPinEnforcementTests {
    /// A library whose configured folder is a symbolic link (a release link such as
    /// `/srv/ops-current`): the pins walk the link without following it, so `trust`
    /// pins 0 files, `hubscript ops:offboard` finds no recipe, and `require("ops.words")`
    /// is refused as "changed while the run was starting". Expected: the link's target
    /// is the library (2 files pinned, the recipe runs).
    func testALibraryFolderThatIsALinkIsPinnedAndRuns() throws {
        try cli.file("releases/ops-1/offboard.lua", """
            recipe { name = "offboard" }
            print(require("ops.words").text)
            """)
        try cli.file("releases/ops-1/words.lua", "return { text = 'words' }\n")
        try FileManager.default.createSymbolicLink(atPath: cli.root.appendingPathComponent("ops-current").path,
                                                   withDestinationPath: "releases/ops-1")
        config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, libraries = { ops = "ops-current" } }
            """)
        let trust = try hubscript("trust")
        XCTAssertEqual(trust.stdout.components(separatedBy: "\n").last { !$0.isEmpty }, "trusted ops: 2 files pinned in hubscript.lock", trust.output)
        let run = try hubscript("ops:offboard")
        XCTAssertEqual(run.stdout, "words\n", run.output)
    }
}

/// Git checkouts changed in the state folder after the fetch: `trust` must refuse them
/// and `verify` must list them ("a tampered checkout is never trusted"), and neither
/// may run what the checkout's own `.git` says.
final class TamperedGitCheckoutTests: XCTestCase {
    var cli: CLIHarness!
    var upstream: GitFixture!
    var config: String!
    var checkout: URL!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        upstream = try GitFixture(in: cli.root)
        let commit = try upstream.commit([
            "hello.lua": "recipe { name = \"hello\" }\nprint('hello v1')\n",
            ".gitignore": "local-*.lua\n",
        ])
        config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, libraries = { sec = "\(upstream.source)@\(commit)" } }
            """)
        XCTAssertEqual(try hubscript("trust").status, 0)
        let repos = cli.stateDir.appendingPathComponent("libraries/git")
        let repo = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: repos.path).first)
        checkout = repos.appendingPathComponent(repo).appendingPathComponent(commit)
    }

    func hubscript(_ args: String...) throws -> CLIHarness.Result { try cli.run(args + ["--config", config]) }

    /// A file added to the checkout under a name the repository's `.gitignore` ignores:
    /// `git status --ignored=no` does not show it, so `trust` pins it as if upstream had
    /// it. Expected: trust refuses the checkout (exit 2, "nothing was trusted").
    func testAFileAddedToTheCheckoutUnderAnIgnoredNameIsNeverTrusted() throws {
        try Data("recipe { name = \"evil\" }\nprint('EVIL')\n".utf8).write(to: checkout.appendingPathComponent("local-evil.lua"))
        let trust = try hubscript("trust")
        XCTAssertEqual(trust.status, 2, trust.output)
        XCTAssertTrue(trust.stderr.hasSuffix("nothing was trusted\n"), trust.output)
        XCTAssertNotEqual(try hubscript("sec:local-evil").stdout, "EVIL\n")
    }

    /// A tracked file changed in the checkout, then hidden from `git status` with
    /// `git update-index --skip-worktree` (the checkout's own index): trust pins the
    /// changed file. Expected: refused, as the same change without the index trick is.
    func testAChangeHiddenByTheCheckoutsIndexIsNeverTrusted() throws {
        try Data("recipe { name = \"hello\" }\nprint('TAMPERED')\n".utf8).write(to: checkout.appendingPathComponent("hello.lua"))
        try GitFixture.git(["update-index", "--skip-worktree", "hello.lua"], in: checkout)
        let trust = try hubscript("trust")
        XCTAssertEqual(trust.status, 2, trust.output)
        XCTAssertNotEqual(try hubscript("sec:hello").stdout, "TAMPERED\n")
    }

    /// `verify` runs git in the checkout, which reads the checkout's `.git/config`:
    /// `core.fsmonitor` there is a command git runs. Expected: verify runs no command
    /// from the state folder (git run with `-c core.fsmonitor=false`, or the checkout
    /// checked without its own configuration).
    func testVerifyRunsNoCommandFromTheCheckoutsGitConfig() throws {
        let marker = cli.root.appendingPathComponent("fsmonitor-ran")
        try GitFixture.git(["config", "core.fsmonitor", "touch '\(marker.path)'; false"], in: checkout)
        _ = try hubscript("verify")
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker.path), "hubscript verify ran the checkout's core.fsmonitor")
    }

    /// A filter driver defined in the checkout's `.git/config` and applied to every file by
    /// its `.git/info/attributes`: `git status` runs a file's clean filter to compare it.
    /// Expected: no command runs, and the checkout is refused as changed after the fetch.
    func testAFilterDriverAddedToTheCheckoutRunsNothingAndIsRefused() throws {
        let marker = cli.root.appendingPathComponent("filter-ran")
        try GitFixture.git(["config", "filter.evil.clean", "touch '\(marker.path)'; cat"], in: checkout)
        let info = checkout.appendingPathComponent(".git/info")
        try FileManager.default.createDirectory(at: info, withIntermediateDirectories: true)
        try Data("* filter=evil\n".utf8).write(to: info.appendingPathComponent("attributes"))
        // Make every file look changed, so status must read (and filter) it.
        let hello = checkout.appendingPathComponent("hello.lua")
        try FileManager.default.setAttributes([.modificationDate: Date(timeIntervalSinceNow: 60)], ofItemAtPath: hello.path)
        for (command, status) in [("verify", Int32(1)), ("trust", Int32(2))] {   // verify: 1 is "does not match"
            let r = try hubscript(command)
            XCTAssertEqual(r.status, status, "\(command): \(r.output)")
            XCTAssertTrue(r.output.contains("has git settings a fetch never writes (filter.evil.clean); it was changed after the fetch. "
                + "Delete that folder and hubscript fetches the commit again"), "\(command): \(r.output)")
        }
        // A run checks the pinned files' digests itself (no git): the pinned file runs.
        XCTAssertEqual(try hubscript("sec:hello").stdout, "hello v1\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: marker.path), "a command from the checkout's .git/config ran")
    }
}
