import Foundation
import XCTest

/// Git libraries pinned to a commit, fetched into the state folder, their
/// files pinned in hubscript.lock — against a bare repository made in the test.
final class GitLibraryCLITests: XCTestCase {
    var cli: CLIHarness!
    var upstream: GitFixture!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        upstream = try GitFixture(in: cli.root)
        try cli.file("r/use.lua", """
            recipe { name = "use" }
            print(require("sec.greeting").text)
            """)
    }

    /// Writes the configuration with library `sec` = `source`.
    @discardableResult
    func config(sec source: String) throws -> String {
        try cli.file("hubscript.config.lua", """
            return { profiles = { local_sandbox = { sandbox = true } }, libraries = { sec = "\(source)" } }
            """)
    }

    func hubscript(_ args: String...) throws -> CLIHarness.Result {
        try cli.run(args + ["--config", cli.root.appendingPathComponent("hubscript.config.lua").path])
    }

    /// Digests vary: `sha256 9d2a…, now 71f0…` reads `sha256 OLD…, now NEW…`.
    func stable(_ text: String) -> String {
        text.replacingOccurrences(of: #"sha256 [0-9a-f]{12}…, now [0-9a-f]{12}…"#, with: "sha256 OLD…, now NEW…",
                                  options: .regularExpression)
    }

    /// `r/use.lua`'s require of a module that does not match its pin: the error line
    /// (`HASH` for each digest).
    func requireRefusal(_ why: String) -> String {
        "error: r/use.lua:2: " + why.replacingOccurrences(of: "LOCK", with: cli.root.appendingPathComponent("hubscript.lock").path)
    }

    func hashesHidden(_ text: String) -> String {
        text.replacingOccurrences(of: #"sha256 [0-9a-f]{64}"#, with: "sha256 HASH", options: .regularExpression)
    }

    static let v1: [String: String] = [
        "greeting.lua": "return { text = 'v1' }\n",
        "offboard.lua": "recipe { name = \"offboard\", needs = { \"users.list\" } }\nprint('offboard v1')\n",
    ]
    static let v2: [String: String] = [
        "greeting.lua": "return { text = 'v2' }\n",
        "offboard.lua": "recipe { name = \"offboard\", needs = { \"users.list\", \"users.manage\" } }\nprint('offboard v2')\n",
    ]

    func testANewCommitUpstreamChangesNothingUntilThePinMoves() throws {
        let first = try upstream.commit(Self.v1)
        try config(sec: "\(upstream.source)@\(first)")
        // A recipe outside the library fails as it requires a module of a library never trusted.
        let untrusted = try hubscript("run", "r/use.lua")
        XCTAssertEqual(untrusted.status, 1, untrusted.output)
        XCTAssertTrue(untrusted.stderr.contains(requireRefusal(
            "library sec is not trusted yet (no LOCK); review its files, then run hubscript trust sec\n")), untrusted.stderr)
        // A recipe of the library is refused before it starts.
        let untrustedRecipe = try hubscript("sec:offboard")
        XCTAssertEqual(untrustedRecipe.status, 2, untrustedRecipe.output)
        XCTAssertTrue(untrustedRecipe.stderr.contains("are not trusted yet (no "), untrustedRecipe.stderr)
        let trust = try hubscript("trust")
        XCTAssertEqual(trust.stdout, """
            added: sec/greeting.lua
            added: sec/offboard.lua; the new manifest asks for: needs users.list
            trusted sec: 2 files pinned in hubscript.lock

            """)
        XCTAssertEqual(trust.status, 0, trust.stderr)
        var run = try hubscript("run", "r/use.lua")
        XCTAssertEqual(run.stdout, "v1\n", run.stderr)
        XCTAssertEqual(try hubscript("sec:offboard").stdout, "offboard v1\n")

        // Upstream moves on: nothing changes here, not even after a fresh fetch.
        let second = try upstream.commit(Self.v2)
        run = try hubscript("run", "r/use.lua")
        XCTAssertEqual(run.stdout, "v1\n", run.stderr)
        XCTAssertEqual(try hubscript("verify").stdout, "ok: 2 files of sec match hubscript.lock\n")
        try FileManager.default.removeItem(at: cli.stateDir.appendingPathComponent("libraries"))
        XCTAssertEqual(try hubscript("run", "r/use.lua").stdout, "v1\n")

        // The pin moves: the new files are refused with what they add until trusted.
        try config(sec: "\(upstream.source)@\(second)")
        let changes = """
            changed: sec/greeting.lua (sha256 OLD…, now NEW…)
            changed: sec/offboard.lua (sha256 OLD…, now NEW…); the new manifest adds: needs users.manage
            """
        let refused = try hubscript("sec:offboard")
        XCTAssertEqual(refused.status, 2)
        XCTAssertEqual(refused.stdout, "")
        XCTAssertTrue(stable(refused.stderr).contains("nothing ran:\n  " + changes.replacingOccurrences(of: "\n", with: "\n  ")
                                                      + "\nReview the changes, then run hubscript trust sec"), refused.stderr)
        let refusedModule = try hubscript("run", "r/use.lua")
        XCTAssertEqual(refusedModule.status, 1)
        XCTAssertEqual(refusedModule.stdout, "")
        XCTAssertTrue(hashesHidden(refusedModule.stderr).contains(requireRefusal(
            "library file sec/greeting.lua changed since it was trusted: LOCK pins sha256 HASH, the file now has sha256 HASH; "
            + "review it, then run hubscript trust sec (hubscript verify lists every change)\n")), refusedModule.stderr)
        let verify = try hubscript("verify")
        XCTAssertEqual(stable(verify.stdout), changes + "\n2 differences from hubscript.lock\n")
        XCTAssertEqual(verify.status, 1)
        XCTAssertEqual(stable(try hubscript("trust", "sec").stdout), changes + "\ntrusted sec: 2 files pinned in hubscript.lock\n")
        XCTAssertEqual(try hubscript("run", "r/use.lua").stdout, "v2\n")
        XCTAssertEqual(try hubscript("verify").status, 0)
    }

    func testABranchAShortIdOrAMissingCommitIsRefused() throws {
        let commit = try upstream.commit(Self.v1)
        let file = try config(sec: "\(upstream.source)@main")
        var r = try hubscript("trust")
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, """
            hubscript trust: config \(file): libraries.sec: 'main' is not a full commit id: a git library is pinned to a commit, \
            40 lowercase hex digits (git rev-parse main in the repository shows it), never a branch, a tag or a short id, which can move

            """)
        try config(sec: "\(upstream.source)@\(commit.prefix(12))")
        r = try hubscript("run", "r/use.lua")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("libraries.sec: '\(commit.prefix(12))' is not a full commit id"), r.stderr)
        try config(sec: upstream.source)
        r = try hubscript("run", "r/use.lua")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("libraries.sec: \(upstream.source) names no commit: pin it as \(upstream.source)@COMMIT"), r.stderr)

        let missing = String(repeating: "0123456789", count: 4)
        try config(sec: "\(upstream.source)@\(missing)")
        r = try hubscript("run", "r/use.lua")
        XCTAssertEqual(r.stderr, """
            hubscript run: config \(file): libraries.sec: the repository file://\(upstream.bare.path) has no commit \(missing); \
            pin the library to a commit that exists there (git log in the repository lists them)

            """)
        XCTAssertEqual(r.status, 2)
        // Nothing half-fetched is left where a checkout would be.
        let repos = cli.stateDir.appendingPathComponent("libraries/git")
        for repo in try FileManager.default.contentsOfDirectory(atPath: repos.path) {
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: repos.appendingPathComponent(repo).path), [])
        }
    }

    /// A URL's shell metacharacters are characters of one argument: git is never run
    /// through a shell.
    func testShellMetacharactersInTheURLReachNoShell() throws {
        let odd = try GitFixture(in: cli.root, name: "we ird;$(touch pwned)`touch pwned2`.git")
        let commit = try odd.commit(Self.v1)
        try config(sec: "\(odd.source)@\(commit)")
        XCTAssertEqual(try hubscript("trust").status, 0)
        XCTAssertEqual(try hubscript("run", "r/use.lua").stdout, "v1\n")
        try config(sec: "git+file:///nowhere/x;touch pwned3 #.git@\(commit)")
        let r = try hubscript("run", "r/use.lua")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("libraries.sec: cannot read the repository file:///nowhere/x;touch pwned3 #.git (git: fatal: "), r.stderr)
        for name in ["pwned", "pwned2", "pwned3"] {
            XCTAssertFalse(FileManager.default.fileExists(atPath: cli.root.appendingPathComponent(name).path), name)
            XCTAssertFalse(FileManager.default.fileExists(atPath: cli.stateDir.appendingPathComponent(name).path), name)
        }
        try config(sec: "git+ext::sh -c touch% pwned4@\(commit)")
        let ext = try hubscript("run", "r/use.lua")
        XCTAssertEqual(ext.status, 2)
        XCTAssertTrue(ext.stderr.contains("is not a git source hubscript fetches (use git+file://, git+https:// or git+ssh://"), ext.stderr)
    }

    /// A file changed in the state folder after the fetch is caught by its pin before it
    /// runs; `verify` and `trust` check the checkout with git as well.
    func testATamperedCheckoutIsRefused() throws {
        let commit = try upstream.commit(Self.v1)
        try config(sec: "\(upstream.source)@\(commit)")
        XCTAssertEqual(try hubscript("trust").status, 0)
        XCTAssertEqual(try hubscript("run", "r/use.lua").stdout, "v1\n")
        let repos = cli.stateDir.appendingPathComponent("libraries/git")
        let repo = try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: repos.path).first)
        let checkout = repos.appendingPathComponent(repo).appendingPathComponent(commit)
        try Data("return { text = 'tampered' }\n".utf8).write(to: checkout.appendingPathComponent("greeting.lua"))

        let refused = try hubscript("sec:offboard")
        XCTAssertEqual(refused.stdout, "")
        XCTAssertEqual(refused.status, 2)
        XCTAssertTrue(stable(refused.stderr).contains("nothing ran:\n  changed: sec/greeting.lua (sha256 OLD…, now NEW…)\n"), refused.stderr)
        let refusedModule = try hubscript("run", "r/use.lua")
        XCTAssertEqual(refusedModule.stdout, "")
        XCTAssertEqual(refusedModule.status, 1)
        XCTAssertTrue(hashesHidden(refusedModule.stderr).contains(requireRefusal(
            "library file sec/greeting.lua changed since it was trusted: LOCK pins sha256 HASH, the file now has sha256 HASH; "
            + "review it, then run hubscript trust sec (hubscript verify lists every change)\n")), refusedModule.stderr)
        let verify = try hubscript("verify")
        XCTAssertEqual(stable(verify.stdout), """
            library sec: the checkout \(checkout.path) differs from commit \(commit) (1 file: greeting.lua); it was changed after the fetch. \
            Delete that folder and hubscript fetches the commit again
            changed: sec/greeting.lua (sha256 OLD…, now NEW…)
            2 differences from hubscript.lock

            """)
        XCTAssertEqual(verify.status, 1)
        let trust = try hubscript("trust")
        XCTAssertEqual(trust.status, 2)
        XCTAssertTrue(trust.stderr.hasSuffix("Delete that folder and hubscript fetches the commit again\nnothing was trusted\n"), trust.stderr)
        try FileManager.default.removeItem(at: checkout)
        XCTAssertEqual(try hubscript("run", "r/use.lua").stdout, "v1\n")
        XCTAssertEqual(try hubscript("verify").status, 0)
    }

    /// A hostile repository's `.lua` link to a device or out of the library is refused
    /// before a byte of it is read.
    func testALinkOutOfTheLibraryIsRefused() throws {
        try FileManager.default.createSymbolicLink(atPath: upstream.work.appendingPathComponent("zero.lua").path,
                                                   withDestinationPath: "/dev/zero")
        let commit = try upstream.commit(Self.v1)
        try config(sec: "\(upstream.source)@\(commit)")
        let r = try hubscript("trust")
        XCTAssertEqual(r.stderr, "hubscript trust: library sec: zero.lua is a link out of the library's folder (to /dev/zero); "
                       + "remove it from the library (require could never load it)\n")
        XCTAssertEqual(r.status, 2)
        // A recipe of the library checks the whole library before it starts: refused.
        let recipe = try hubscript("sec:offboard")
        XCTAssertTrue(recipe.stderr.contains("are not trusted yet (no "), recipe.stderr)
        XCTAssertEqual(recipe.status, 2)
        // A recipe outside it loads only greeting.lua, which was never trusted.
        XCTAssertEqual(try hubscript("run", "r/use.lua").status, 1)
    }

    /// A server that serves no commit by its id (git protocol v0, a commit that is not a
    /// branch tip): the branches are fetched and the pinned commit is found among them.
    func testACommitThatIsNoLongerATipIsFoundThroughTheBranches() throws {
        let first = try upstream.commit(Self.v1)
        try upstream.commit(Self.v2)
        let home = cli.root.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: true)
        try Data("[protocol]\n\tversion = 0\n".utf8).write(to: home.appendingPathComponent(".gitconfig"))
        cli.extraEnvironment["HOME"] = home.path
        try config(sec: "\(upstream.source)@\(first)")
        XCTAssertEqual(try hubscript("trust").status, 0)
        XCTAssertEqual(try hubscript("run", "r/use.lua").stdout, "v1\n")
        try config(sec: "\(upstream.source)@\(String(repeating: "ab", count: 20))")
        XCTAssertTrue(try hubscript("run", "r/use.lua").stderr.contains("has no commit abab"))
    }

    /// A fetch killed halfway leaves a scratch folder beside the checkouts, never used.
    func testAHalfFetchedCheckoutIsNeverUsed() throws {
        let commit = try upstream.commit(Self.v1)
        try config(sec: "\(upstream.source)@\(commit)")
        XCTAssertEqual(try hubscript("trust").status, 0)
        let repos = cli.stateDir.appendingPathComponent("libraries/git")
        let repo = repos.appendingPathComponent(try XCTUnwrap(try FileManager.default.contentsOfDirectory(atPath: repos.path).first))
        try FileManager.default.removeItem(at: repo.appendingPathComponent(commit))
        let scratch = repo.appendingPathComponent(".fetch-\(commit.prefix(12))-killed")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        try Data("return { text = 'half' }\n".utf8).write(to: scratch.appendingPathComponent("greeting.lua"))
        XCTAssertEqual(try hubscript("run", "r/use.lua").stdout, "v1\n")
        XCTAssertEqual(try hubscript("verify").status, 0)
    }
}
