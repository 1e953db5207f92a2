import Foundation
import XCTest

/// `--key-file` where a run opens the vault, and `vault init --key-file` into folders
/// that do not exist yet.
final class VaultKeyFileCLITests: XCTestCase {
    /// A recipe that reads the vault entry `app/token` (a declared secret is read before
    /// the body runs: without the key, the run stops with exit code 2).
    static let reader = """
        recipe { name = "reader", secrets = { "app/token" } }
        local token = vault.secret("app/token")
        print(tostring(token))
        """

    /// A vault holding `app/token` = "s3cret!", with no key in the children's environment.
    func lockedVault() throws -> VaultCLI {
        let vault = try VaultCLI(testCase: self)
        try vault.initialise()
        XCTAssertEqual(try vault.run(["set", "app/token", "--key-file", vault.keyFile], stdin: "s3cret!\n").status, 0)
        try vault.harness.file("reader.lua", Self.reader)
        return vault
    }

    func testRunAndPlanOpenTheVaultWithKeyFile() throws {
        let vault = try lockedVault()
        let cli = vault.harness
        let locked = try cli.run(["run", "reader.lua", "--quiet"])
        XCTAssertEqual(locked.status, 2, locked.output)
        XCTAssertTrue(locked.stderr.contains("is locked"), locked.stderr)
        for command in ["run", "plan"] {
            let r = try cli.run([command, "reader.lua", "--quiet", "--key-file", vault.keyFile])
            XCTAssertEqual(r.status, 0, "\(command): \(r.output)")
            XCTAssertEqual(r.stdout, "<secret app/token>\n", command)
        }
        // A relative path is the current folder's (the harness runs in its root).
        let relative = try cli.run(["run", "reader.lua", "--quiet", "--key-file", "vault.key"])
        XCTAssertEqual(relative.status, 0, relative.output)
        XCTAssertEqual(relative.stdout, "<secret app/token>\n")
    }

    func testKeyFileWinsOverTheEnvironment() throws {
        let vault = try lockedVault()
        let cli = vault.harness
        let other = cli.root.appendingPathComponent("other.key").path
        XCTAssertEqual(try vault.run(["init", "--key-file", other, "--vault-dir", cli.root.appendingPathComponent("other-vault").path]).status, 0)
        cli.extraEnvironment["HUBSCRIPT_VAULT_KEY_FILE"] = other
        let wrong = try cli.run(["run", "reader.lua", "--quiet"])
        XCTAssertEqual(wrong.status, 2, wrong.output)
        XCTAssertTrue(wrong.stderr.contains("does not open with the key file \(other)"), wrong.stderr)
        let right = try cli.run(["run", "reader.lua", "--quiet", "--key-file", vault.keyFile])
        XCTAssertEqual(right.status, 0, right.output)
        XCTAssertEqual(right.stdout, "<secret app/token>\n")
    }

    func testAMissingKeyFileIsRefusedWhenTheVaultOpens() throws {
        let vault = try lockedVault()
        let cli = vault.harness
        let missing = cli.root.appendingPathComponent("nowhere.key").path
        let r = try cli.run(["run", "reader.lua", "--quiet", "--key-file", missing])
        XCTAssertEqual(r.status, 2, r.output)
        XCTAssertEqual(r.stderr, "error: the recipe declares the secret 'app/token', which cannot be read: vault_error: cannot read the key file \(missing): no such file or directory\n")
        XCTAssertEqual(r.stdout, "")
        // A recipe that never opens the vault does not read the key file at all.
        try cli.file("plain.lua", "recipe { name = \"plain\" }\nprint(\"hi\")\n")
        let plain = try cli.run(["run", "plain.lua", "--quiet", "--key-file", missing])
        XCTAssertEqual(plain.status, 0, plain.output)
        XCTAssertEqual(plain.stdout, "hi\n")
        let empty = try cli.run(["run", "plain.lua", "--key-file", ""])
        XCTAssertEqual(empty.status, 2)
        XCTAssertEqual(empty.stderr, "hubscript run: --key-file takes the path of a key file, got ''\nRun 'hubscript run --help' for usage.\n")
    }

    func testApplyAndResumeTakeKeyFile() throws {
        let vault = try lockedVault()
        let cli = vault.harness
        let plan = try cli.run(["plan", "reader.lua", "--quiet", "--key-file", vault.keyFile, "--out", "p.json"])
        XCTAssertEqual(plan.status, 0, plan.output)
        let apply = try cli.run(["apply", "p.json", "--quiet", "--key-file", vault.keyFile])
        XCTAssertEqual(apply.status, 0, apply.output)
        XCTAssertEqual(apply.stdout, "<secret app/token>\n")
        let resume = try cli.run(["runs", "resume", "run_none", "--key-file", vault.keyFile])
        XCTAssertFalse(resume.stderr.contains("unknown option"), resume.stderr)
    }

    // MARK: vault init into new folders

    func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    func testInitCreatesTheKeyFilesMissingFoldersAs0700() throws {
        let vault = try VaultCLI(testCase: self)
        let home = vault.harness.root.appendingPathComponent("home")
        try FileManager.default.createDirectory(at: home, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o755])
        let key = home.appendingPathComponent(".config/hubscript/vault.key").path
        let r = try vault.run(["init", "--key-file", key])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("Wrote a new key to \(key) (mode 0600)."), r.stdout)
        XCTAssertEqual(try mode(home.appendingPathComponent(".config").path), 0o700)
        XCTAssertEqual(try mode(home.appendingPathComponent(".config/hubscript").path), 0o700)
        XCTAssertEqual(try mode(key), 0o600)
        XCTAssertEqual(try mode(home.path), 0o755, "a folder that existed keeps its mode")
        // The key opens the vault.
        let set = try vault.run(["set", "a/b", "--key-file", key], stdin: "v\n")
        XCTAssertEqual(set.status, 0, set.stderr)
    }

    func testInitLeavesAnExistingFoldersModeAlone() throws {
        let vault = try VaultCLI(testCase: self)
        let shared = vault.harness.root.appendingPathComponent("shared")
        try FileManager.default.createDirectory(at: shared, withIntermediateDirectories: false,
                                                attributes: [.posixPermissions: 0o750])
        let r = try vault.run(["init", "--key-file", shared.appendingPathComponent("new/vault.key").path])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertEqual(try mode(shared.path), 0o750)
        XCTAssertEqual(try mode(shared.appendingPathComponent("new").path), 0o700)
    }

    func testInitUnderAFileSaysWhichFolderCannotBeMade() throws {
        let vault = try VaultCLI(testCase: self)
        let file = try vault.harness.file("plain-file", "x")
        let key = file + "/sub/vault.key"
        let r = try vault.run(["init", "--key-file", key])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.stderr, """
            hubscript vault init: cannot create the folder \(file)/sub for the key file \(key): Not a directory \
            (create it with mode 0700, or give --key-file another path)

            """)
        XCTAssertFalse(FileManager.default.fileExists(atPath: vault.indexPath))
    }
}
