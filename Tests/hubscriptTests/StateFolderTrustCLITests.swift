import Foundation
import XCTest

/// The state folder holds credentials, the vault and the journal: one owned by another
/// user is refused, one anybody can write (0777) is tightened, and the journal is made
/// the owner's alone (0600, its log and index too).
final class StateFolderTrustCLITests: XCTestCase {
    var cli: CLIHarness!
    var recipe: String!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        recipe = try cli.file("p.lua", """
            recipe { name = "p", version = "1.0.0", description = "d", needs = { "users.list" } }
            for _ in hub.users.list() do end
            print("ok")
            """)
    }

    func mode(_ path: String) -> mode_t {
        var s = stat()
        XCTAssertEqual(stat(path, &s), 0, path)
        return s.st_mode & 0o7777
    }

    /// Hands `path` to another user (tests run as root in CI; skipped otherwise).
    func giveAway(_ path: String, uid: uid_t = 12_345) throws {
        guard chown(path, uid, uid) == 0 else { throw XCTSkip("chown needs root: \(String(cString: strerror(errno)))") }
    }

    func testAFolderAnybodyCanWriteIsTightenedAndTheJournalIsPrivate() throws {
        try FileManager.default.createDirectory(at: cli.stateDir, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(cli.stateDir.path, 0o777), 0)
        let r = try cli.run(["run", recipe], expect: 0)
        XCTAssertEqual(r.stdout, "ok\n")
        XCTAssertEqual(mode(cli.stateDir.path), 0o755)
        let journal = cli.stateDir.appendingPathComponent("journal")
        XCTAssertEqual(mode(journal.path), 0o700)
        for suffix in ["", "-wal", "-shm", "-commits"] {
            XCTAssertEqual(mode(journal.path + "/journal.sqlite" + suffix), 0o600, suffix)
        }
    }

    func testAJournalMadeReadableByOthersIsTightened() throws {
        try cli.run(["run", recipe], expect: 0)
        let journal = cli.stateDir.appendingPathComponent("journal")
        XCTAssertEqual(chmod(journal.path, 0o777), 0)
        for suffix in ["", "-wal", "-shm"] { XCTAssertEqual(chmod(journal.path + "/journal.sqlite" + suffix, 0o666), 0) }
        try cli.run(["runs", "list"], expect: 0)
        XCTAssertEqual(mode(journal.path), 0o700)
        for suffix in ["", "-wal", "-shm"] { XCTAssertEqual(mode(journal.path + "/journal.sqlite" + suffix), 0o600, suffix) }
    }

    func testAStateFolderOwnedByAnotherUserIsRefused() throws {
        try FileManager.default.createDirectory(at: cli.stateDir, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(cli.stateDir.path, 0o777), 0)
        try giveAway(cli.stateDir.path)
        for args in [["run", recipe!], ["runs", "list"]] {
            let r = try cli.run(args)
            XCTAssertEqual(r.status, 2, r.output)
            XCTAssertEqual(r.stdout, "")
            XCTAssertTrue(r.stderr.hasSuffix("""
                the state folder \(cli.stateDir.path) is owned by another user (uid 12345), not by you (uid \(geteuid())); \
                it holds your credentials, vault and journal, so hubscript uses only a folder of its own. Fix: set \
                --state-dir (or HUBSCRIPT_STATE_DIR) to a folder of your own, or remove this one and run again

                """), r.stderr)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: cli.stateDir.appendingPathComponent("journal").path),
                       "nothing was made inside it")
    }

    func testAJournalFolderOwnedByAnotherUserIsRefused() throws {
        let journal = cli.stateDir.appendingPathComponent("journal")
        try FileManager.default.createDirectory(at: journal, withIntermediateDirectories: true)
        XCTAssertEqual(chmod(journal.path, 0o777), 0)
        try giveAway(journal.path)
        let r = try cli.run(["runs", "list"])
        XCTAssertEqual(r.status, 2, r.output)
        XCTAssertTrue(r.stderr.contains("the state folder \(journal.path) is owned by another user (uid 12345)"), r.stderr)
        XCTAssertFalse(FileManager.default.fileExists(atPath: journal.appendingPathComponent("journal.sqlite").path))
    }
}
