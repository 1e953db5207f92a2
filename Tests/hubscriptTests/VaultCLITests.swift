import Foundation
import Vault
import XCTest

/// `hubscript vault …` as a user runs it: exact output and exit codes (0 done, 2 a
/// usage, key or vault error), and no command that shows a value.
final class VaultCLITests: XCTestCase {
    var cli: VaultCLI!
    var key: [String] { ["--key-file", cli.keyFile] }

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try VaultCLI(testCase: self)
    }

    func assertOutcome(_ r: VaultCLI.Outcome, _ status: Int32, stdout: String, stderr: String = "",
                       file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(r.status, status, "exit code", file: file, line: line)
        XCTAssertFalse(r.signalled, file: file, line: line)
        XCTAssertEqual(r.stdout, stdout, "stdout", file: file, line: line)
        XCTAssertEqual(r.stderr, stderr, "stderr", file: file, line: line)
    }

    func testTheVaultGroupsHelpListsItsSubcommands() throws {
        assertOutcome(try cli.run(["--help"]), 0, stdout: """
        OVERVIEW: Keep secrets and private files encrypted at rest.

        USAGE: hubscript vault <subcommand> [options]

        SUBCOMMANDS:
          init        Create an empty vault.
          set         Store a secret, read from standard input or a prompt (never from the command line).
          list        List the vault's entries: names, kinds and dates, never values.
          rm          Remove a secret, or an object and its file.
          rotate-key  Re-seal every entry under a new key; the old key stops working.
          put-object  Store a file encrypted in the vault; print its object id.
          get-object  Decrypt an object to a file (complete and verified, or not at all).
          verify      Check that the key opens the vault and every entry (or those named) authenticates.
          reseal      Accept the vault as it is now, after restoring it (or an entry) from a backup on purpose.

        See 'hubscript vault <subcommand> --help'.

        """)
        let get = try cli.run(["get", "x"])
        assertOutcome(get, 2, stdout: "", stderr: """
        hubscript vault: unknown subcommand 'get' (did you mean 'set'?)
        Run 'hubscript vault --help' for the list.

        """)
    }

    func testSetsHelpSaysWhereTheValueComesFrom() throws {
        assertOutcome(try cli.run(["set", "--help"]), 0, stdout: """
        OVERVIEW: Store a secret, read from standard input or a prompt (never from the command line).

        USAGE: hubscript vault set NAME [--key-file PATH | --passphrase] [--vault-dir DIR]

        The value is standard input when it is not a terminal (one trailing newline is
        dropped), else typed at a prompt without echo. At most 1 MiB; larger files are
        objects (put-object). Names: letters, digits and . _ - / @ : + =. Setting an
        entry that was replaced by an older copy of itself replaces that copy.
        Exit codes: 0 done, 2 a usage, key or vault error (the vault is left as it was).

        OPTIONS:
          --key-file <path>  Open with this key file: 32 bytes, raw, hex or base64; mode 0600 (default: $HUBSCRIPT_VAULT_KEY).
          --passphrase       Open with a passphrase, prompted without echo ($HUBSCRIPT_VAULT_PASSPHRASE if set).
          --vault-dir <dir>  The vault's folder (default: $HUBSCRIPT_VAULT_DIR, else vault/ in the state directory).
          --state-dir <dir>  Where credentials, the journal and the sandbox live (default: $HUBSCRIPT_STATE_DIR, $XDG_STATE_HOME/hubscript).
          -h, --help         Show help information.

        """)
    }

    func testInitWritesAPrivateKeyFileAndAnEmptyVault() throws {
        assertOutcome(try cli.run(["init", "--key-file", cli.keyFile]), 0, stdout: """
        Wrote a new key to \(cli.keyFile) (mode 0600). Keep a copy somewhere safe: without it the vault cannot be opened.
        Created a vault at \(cli.folder.path); it opens with the key file \(cli.keyFile).

        """)
        var info = stat()
        XCTAssertEqual(stat(cli.keyFile, &info), 0)
        XCTAssertEqual(info.st_mode & 0o777, 0o600)
        XCTAssertEqual(info.st_size, 65)
        assertOutcome(try cli.run(["list"] + key), 0, stdout: "The vault is empty.\n")
        assertOutcome(try cli.run(["init"] + key), 2, stdout: "", stderr: "hubscript vault init: a vault already exists at \(cli.indexPath)\n")
    }

    func testSetReadsStandardInputAndListShowsNamesAndDatesNeverValues() throws {
        try cli.initialise()
        assertOutcome(try cli.run(["set", "db/password"] + key, stdin: "hunter2\n"), 0, stdout: "Stored the secret 'db/password' (new).\n")
        assertOutcome(try cli.run(["set", "api/token"] + key, stdin: "tok\r\n"), 0, stdout: "Stored the secret 'api/token' (new).\n")
        assertOutcome(try cli.run(["set", "db/password"] + key, stdin: "hunter3"), 0, stdout: "Stored the secret 'db/password' (replaced).\n")
        XCTAssertEqual(try cli.value("db/password"), "hunter3")
        XCTAssertEqual(try cli.value("api/token"), "tok")
        let entries = try cli.open().list()
        let time = ISO8601DateFormatter()
        let list = try cli.run(["list"] + key)
        assertOutcome(list, 0, stdout: """
        NAME         KIND    CREATED               UPDATED               OBJECT
        api/token    secret  \(time.string(from: entries[0].created))  \(time.string(from: entries[0].updated))
        db/password  secret  \(time.string(from: entries[1].created))  \(time.string(from: entries[1].updated))

        """)
        let json = try cli.run(["list", "--json"] + key)
        XCTAssertEqual(json.stdout.split(separator: "\n").first.map(String.init), """
        {"created_at":"\(time.string(from: entries[0].created))","kind":"secret","name":"api/token","object_id":null,"size":null,"type":"vault_entry","updated_at":"\(time.string(from: entries[0].updated))"}
        """)
        for output in [list.stdout, list.stderr, json.stdout] { XCTAssertFalse(output.contains("hunter") || output.contains("tok\""), output) }
    }

    func testProcessesSettingAtOnceKeepEachOthersChanges() throws {
        try cli.initialise()
        for round in 0..<4 {
            let running = try (0..<4).map { k in try cli.start(["set", "p\(k)/r\(round)"] + key, stdin: "v\(k)-\(round)") }
            for (_, finish) in running { XCTAssertEqual(try finish().status, 0) }
        }
        let vault = try cli.open()
        XCTAssertEqual(try vault.list().count, 16)
        XCTAssertEqual(try cli.value("p3/r2"), "v3-2")
    }

    func testAValueOnTheCommandLineIsRefused() throws {
        try cli.initialise()
        assertOutcome(try cli.run(["set", "db/password", "hunter2"] + key), 2, stdout: "", stderr: """
        hubscript vault set: expected one NAME: the value is read from standard input or a prompt, never from the command line
        Run 'hubscript vault set --help' for usage.

        """)
        assertOutcome(try cli.run(["set", "a b"] + key, stdin: "x"), 2, stdout: "", stderr: """
        hubscript vault set: invalid name 'a b': use 1–255 letters, digits and . _ - / @ : + = starting with a letter or digit

        """)
        assertOutcome(try cli.run(["set", "empty"] + key, stdin: "\n"), 2, stdout: "", stderr: "hubscript vault set: the value of 'empty' is empty: nothing to store\n")
        XCTAssertEqual(try cli.open().list(), [])
    }

    func testKeyAndVaultErrorsAreExactAndExitTwo() throws {
        assertOutcome(try cli.run(["list"] + key), 2, stdout: "",
                      stderr: "hubscript vault list: no vault at \(cli.folder.path) (create one with 'hubscript vault init')\n")
        try cli.initialise()
        assertOutcome(try cli.run(["list"]), 2, stdout: "", stderr: """
        hubscript vault list: no vault key: pass --key-file PATH or --passphrase, or set HUBSCRIPT_VAULT_KEY or HUBSCRIPT_VAULT_KEY_FILE
        Run 'hubscript vault list --help' for usage.

        """)
        let other = cli.harness.root.appendingPathComponent("other.key").path
        try Data(String(repeating: "ab", count: 32).utf8).write(to: URL(fileURLWithPath: other))
        chmod(other, 0o644)
        assertOutcome(try cli.run(["list", "--key-file", other]), 2, stdout: "",
                      stderr: "hubscript vault list: the key file \(other) can be read or written by others (mode 644): run chmod 600 \(other)\n")
        chmod(other, 0o600)
        assertOutcome(try cli.run(["set", "x", "--key-file", other], stdin: "v"), 2, stdout: "",
                      stderr: "hubscript vault set: wrong key: the vault \(cli.indexPath) does not open with the key file \(other) (nothing was read or changed)\n")
        assertOutcome(try cli.run(["list", "--key-file", other, "--passphrase"]), 2, stdout: "", stderr: """
        hubscript vault list: --key-file and --passphrase: give one
        Run 'hubscript vault list --help' for usage.

        """)
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: cli.indexPath)))
        bytes[8] = 7
        try Data(bytes).write(to: URL(fileURLWithPath: cli.indexPath))
        assertOutcome(try cli.run(["list"] + key), 2, stdout: "",
                      stderr: "hubscript vault list: the vault \(cli.indexPath) was written by a newer hubscript: format 7, this build reads up to 2\n")
    }

    func testATamperedEntryIsNamedByListAndCanBeRemoved() throws {
        try cli.initialise()
        try cli.run(["set", "db/password"] + key, stdin: "hunter2")
        try cli.run(["set", "api/token"] + key, stdin: "t")
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: cli.indexPath)))
        bytes[try XCTUnwrap(VaultCLI.recordRange("api/token", in: bytes)).upperBound - 1] ^= 1   // the last entry's tag
        try Data(bytes).write(to: URL(fileURLWithPath: cli.indexPath))
        let message = "entry 'api/token' in the vault \(cli.indexPath) failed authentication: it was altered, moved or renamed (restore the vault from a backup, or remove the entry)"
        assertOutcome(try cli.run(["list"] + key), 2, stdout: "", stderr: "hubscript vault list: \(message)\n")
        assertOutcome(try cli.run(["set", "x"] + key, stdin: "v"), 2, stdout: "", stderr: "hubscript vault set: \(message)\n")
        assertOutcome(try cli.run(["rm", "api/token"] + key), 0, stdout: "Removed the secret 'api/token'.\n")
        assertOutcome(try cli.run(["verify"] + key), 0, stdout: "Verified 1 secret and 0 objects in \(cli.folder.path).\n")
    }

    func testRotateKeyRefusesTheOldKeyAfterwards() throws {
        try cli.initialise()
        try cli.run(["set", "db/password"] + key, stdin: "hunter2")
        let newKey = cli.harness.root.appendingPathComponent("new.key").path
        assertOutcome(try cli.run(["rotate-key", "--new-key-file", newKey] + key), 0, stdout: """
        Wrote a new key to \(newKey) (mode 0600). Keep a copy somewhere safe: without it the vault cannot be opened.
        Re-sealed 1 entry under the new key (object files are unchanged); the old key no longer opens the vault.

        """)
        assertOutcome(try cli.run(["verify"] + key), 2, stdout: "",
                      stderr: "hubscript vault verify: wrong key: the vault \(cli.indexPath) does not open with the key file \(cli.keyFile) (nothing was read or changed)\n")
        assertOutcome(try cli.run(["verify", "db/password", "--key-file", newKey]), 0, stdout: "Verified 1 secret and 0 objects in \(cli.folder.path).\n")
        assertOutcome(try cli.run(["rotate-key", "--key-file", newKey]), 2, stdout: "", stderr: """
        hubscript vault rotate-key: no new key: pass --key-file PATH (created if missing) or --passphrase, or set HUBSCRIPT_VAULT_NEW_KEY
        Run 'hubscript vault rotate-key --help' for usage.

        """)
    }

    func testTheKeyAndPassphraseCanComeFromTheEnvironment() throws {
        let hex = String(repeating: "5a", count: 32)
        assertOutcome(try cli.run(["init"], environment: ["HUBSCRIPT_VAULT_KEY": hex]), 0,
                      stdout: "Created a vault at \(cli.folder.path); it opens with the key in $HUBSCRIPT_VAULT_KEY.\n")
        assertOutcome(try cli.run(["set", "a"], stdin: "1", environment: ["HUBSCRIPT_VAULT_KEY": hex]), 0, stdout: "Stored the secret 'a' (new).\n")
        let phrase = ["HUBSCRIPT_VAULT_NEW_PASSPHRASE": "a long passphrase", "HUBSCRIPT_VAULT_KEY": hex]
        assertOutcome(try cli.run(["rotate-key", "--new-passphrase", "--kdf", "interactive"], environment: phrase), 0,
                      stdout: "Re-sealed 1 entry under the new key (object files are unchanged); the old key no longer opens the vault.\n")
        assertOutcome(try cli.run(["verify", "--passphrase"], environment: ["HUBSCRIPT_VAULT_PASSPHRASE": "a long passphrase"]), 0,
                      stdout: "Verified 1 secret and 0 objects in \(cli.folder.path).\n")
        assertOutcome(try cli.run(["verify"], environment: ["HUBSCRIPT_VAULT_PASSPHRASE": "wrong"]), 2, stdout: "",
                      stderr: "hubscript vault verify: wrong key: the vault \(cli.indexPath) does not open with the passphrase (nothing was read or changed)\n")
        assertOutcome(try cli.run(["verify"], environment: ["HUBSCRIPT_VAULT_KEY": hex]), 2, stdout: "",
                      stderr: "hubscript vault verify: the vault \(cli.indexPath) opens with a passphrase (--passphrase or HUBSCRIPT_VAULT_PASSPHRASE), not a key\n")
    }

    func testPutAndGetObjectRoundTripAndAFailedGetLeavesNoFile() throws {
        try cli.initialise()
        let input = cli.harness.root.appendingPathComponent("report.bin")
        let data = Data((0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 7) })
        try data.write(to: input)
        let put = try cli.run(["put-object", input.path, "--name", "reports/q1"] + key)
        XCTAssertEqual(put.status, 0, put.stderr)
        let id = put.stdout.trimmingCharacters(in: .newlines)
        XCTAssertTrue(VaultName.isObjectID(id), id)
        XCTAssertEqual(put.stderr, "")
        let out = cli.harness.root.appendingPathComponent("copy.bin").path
        assertOutcome(try cli.run(["get-object", id, "--out", out] + key), 0, stdout: "Wrote 300000 bytes to \(out).\n")
        XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), data)
        let entry = try XCTUnwrap(try cli.open().list().first)
        let time = ISO8601DateFormatter()
        assertOutcome(try cli.run(["list"] + key), 0, stdout: """
        NAME        KIND    CREATED               UPDATED               OBJECT
        reports/q1  object  \(time.string(from: entry.created))  \(time.string(from: entry.updated))  \(id) (300000 bytes)

        """)
        // Damage the object's last chunk: the get fails and leaves no file.
        let objectFile = cli.folder.appendingPathComponent("objects/\(id)").path
        var bytes = Array(try Data(contentsOf: URL(fileURLWithPath: objectFile)))
        bytes[bytes.count - 1] ^= 1
        try Data(bytes).write(to: URL(fileURLWithPath: objectFile))
        let damagedOut = cli.harness.root.appendingPathComponent("damaged.bin").path
        assertOutcome(try cli.run(["get-object", "reports/q1", "--out", damagedOut] + key), 2, stdout: "",
                      stderr: "hubscript vault get-object: object 'reports/q1' (\(id)) failed authentication after 262144 bytes: it was altered or corrupted\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: damagedOut))
        assertOutcome(try cli.run(["get-object", "reports/q1"] + key), 2, stdout: "", stderr: """
        hubscript vault get-object: --out FILE is required (the object is never printed)
        Run 'hubscript vault get-object --help' for usage.

        """)
        assertOutcome(try cli.run(["rm", "reports/q1"] + key), 0, stdout: "Removed the object 'reports/q1' and its file.\n")
        XCTAssertFalse(FileManager.default.fileExists(atPath: objectFile))
    }
}
