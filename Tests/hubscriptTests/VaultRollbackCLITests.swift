import Foundation
import Vault
import XCTest

/// A vault whose entry was replaced by an older sealed copy (a file edit that needs no
/// key), or that was replaced as a whole by an older copy, is refused by every
/// command and every run with what happened and what to do; `vault set` or `vault rm`
/// of the entry, or `vault reseal` after a restore on purpose, puts it right.
final class VaultRollbackCLITests: XCTestCase {
    var cli: VaultCLI!
    var key: [String] { ["--key-file", cli.keyFile] }

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try VaultCLI(testCase: self)
        try cli.initialise()
    }

    func set(_ name: String, _ value: String) throws {
        let r = try cli.run(["set", name] + key, stdin: value)
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    func bytes() throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: cli.indexPath))) }
    func write(_ bytes: [UInt8]) throws { try Data(bytes).write(to: URL(fileURLWithPath: cli.indexPath)) }

    func record(_ name: String, in bytes: [UInt8]) throws -> Range<Int> {
        try XCTUnwrap(VaultCLI.recordRange(name, in: bytes), "no record \(name)")
    }

    /// The current file with `name`'s record replaced by its copy in `old`.
    func spliced(_ name: String, from old: [UInt8]) throws -> [UInt8] {
        var current = try bytes()
        current.replaceSubrange(try record(name, in: current), with: old[try record(name, in: old)])
        return current
    }

    func assertRefused(_ args: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try cli.run(args + key)
        XCTAssertEqual(r.status, 2, r.stderr, file: file, line: line)
        XCTAssertEqual(r.stdout, "", file: file, line: line)
        XCTAssertEqual(r.stderr, "hubscript vault \(args[0]): \(message)\n", file: file, line: line)
    }

    func testAnEntrySplicedFromAnOlderCopyIsRefusedUntilItIsSetAgain() throws {
        try set("api/key", "first-key")
        try set("db/password", "hunter2")
        let old = try bytes()
        try set("api/key", "rotated-key")
        try write(try spliced("api/key", from: old))
        let message = "entry 'api/key' in the vault \(cli.indexPath) is not the copy the vault last sealed: an older copy of it was put in its place outside hubscript, so its value may be old (a rotated secret come back). Set it again ('hubscript vault set api/key'), remove it ('hubscript vault rm api/key'), or, if you restored it on purpose, accept the vault as it is with 'hubscript vault reseal'"
        try assertRefused(["verify"], message)
        try assertRefused(["list"], message)
        try assertRefused(["set", "other"], message)
        // A run that reads a secret stops with the vault's reason.
        let recipe = try cli.harness.file("r.lua", """
            recipe { name = "r", secrets = { "db/password" } }
            local ok, err = pcall(vault.secret, "db/password")
            print(ok, err.code, err.reason)
            """)
        cli.harness.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": cli.keyFile]
        let run = try cli.harness.run(["run", recipe])
        XCTAssertEqual(run.status, 2, run.stderr)
        XCTAssertEqual(run.stdout, "")
        XCTAssertEqual(run.stderr.split(separator: "\n", maxSplits: 1).last.map(String.init),
                       "error: the recipe declares the secret 'db/password', which cannot be read: vault_error: \(message)\n")
        // Setting it again replaces the old copy; the vault opens again.
        try set("api/key", "third-key")
        XCTAssertEqual(try cli.run(["verify"] + key).stdout, "Verified 2 secrets and 0 objects in \(cli.folder.path).\n")
        XCTAssertEqual(try cli.value("api/key"), "third-key")
        // Or removing it.
        let beforeThird = try bytes()
        try set("api/key", "fourth-key")
        try write(try spliced("api/key", from: beforeThird))
        try assertRefused(["verify"], message)
        XCTAssertEqual(try cli.run(["rm", "api/key"] + key).stdout, "Removed the secret 'api/key'.\n")
        XCTAssertEqual(try cli.run(["verify"] + key).status, 0)
    }

    func testAWholeVaultRolledBackIsRefusedUntilResealed() throws {
        try set("api/key", "first-key")
        let old = try bytes()
        try set("api/key", "rotated-key")
        try write(old)
        let id = try cli.open().id
        let memory = cli.harness.stateDir.appendingPathComponent("vault-generations/\(id)").path
        let message = "the vault \(cli.indexPath) was rolled back: it is at generation 2, but this machine has seen generation 3 of it (remembered in \(memory)). An older copy of the whole vault was put in its place (a restored backup, a sync conflict, or someone reverting a rotated secret), so its values may be old. Put the newest copy back; or, if you restored this copy on purpose, accept it with 'hubscript vault reseal'"
        try assertRefused(["verify"], message)
        try assertRefused(["set", "api/key"], message)
        let resealed = try cli.run(["reseal"] + key)
        XCTAssertEqual(resealed.stdout, "Sealed the vault \(cli.folder.path) as it is, at generation 4.\n", resealed.stderr)
        XCTAssertEqual(try cli.run(["verify"] + key).status, 0)
        XCTAssertEqual(try cli.value("api/key"), "first-key")
        XCTAssertEqual(try cli.run(["reseal", "extra"] + key).stderr, "hubscript vault reseal: unexpected argument 'extra'\nRun 'hubscript vault reseal --help' for usage.\n")
    }

    func testADamagedGenerationRecordIsNamedAndResealRepairsIt() throws {
        try set("a", "1")
        let id = try cli.open().id
        let memory = cli.harness.stateDir.appendingPathComponent("vault-generations/\(id)").path
        try Data("garbage\n".utf8).write(to: URL(fileURLWithPath: memory))
        try assertRefused(["list"], "the record of this vault's generation, \(memory), is damaged (its contents are not a generation this build wrote), so hubscript cannot tell whether the vault was rolled back to an older copy. If the vault is the copy you expect, accept it with 'hubscript vault reseal' (or remove that file)")
        XCTAssertEqual(try cli.run(["reseal"] + key).status, 0)
        XCTAssertEqual(try cli.run(["list"] + key).status, 0)
    }

    /// A key file that is a FIFO nobody writes to is refused at once (it used to hang).
    func testAKeyFileThatIsAFIFOIsRefusedWithoutWaiting() throws {
        let fifo = cli.harness.root.appendingPathComponent("key.fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        let r = try cli.run(["list", "--key-file", fifo])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "hubscript vault list: the key file \(fifo) is a FIFO (named pipe), not a regular file: give a file holding the key (mode 0600)\n")
        let viaEnvironment = try cli.run(["list"], environment: ["HUBSCRIPT_VAULT_KEY_FILE": fifo])
        XCTAssertEqual(viaEnvironment.stderr, r.stderr)
    }
}
