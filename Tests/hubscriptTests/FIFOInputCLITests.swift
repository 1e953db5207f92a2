import Foundation
import XCTest

/// A file a user names that is a FIFO nothing writes to — a recipe, a params file, a
/// `file` parameter read with csv.rows, a vault key file — is refused at once with
/// what it is, instead of waiting forever for a writer.
final class FIFOInputCLITests: XCTestCase {
    var cli: CLIHarness!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
    }

    func fifo(_ name: String) throws -> String {
        let path = cli.root.appendingPathComponent(name).path
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        return path
    }

    /// The last line of stderr (after the built-in sandbox's notice and the run's start).
    func lastLine(_ text: String) -> String { text.split(separator: "\n").last.map(String.init) ?? "" }

    func testARecipeOrAParamsFileThatIsAFIFOIsRefusedAtOnce() throws {
        let recipe = try fifo("r.lua")
        let r = try cli.run(["run", recipe])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(r.stderr, "error: cannot read \(recipe): it is a FIFO (named pipe) that nothing is writing to\n")
        let ok = try cli.file("ok.lua", #"recipe { name = "ok", params = { n = { type = "number", default = 1 } } } print(params.n)"#)
        let params = try fifo("params.json")
        let p = try cli.run(["run", ok, "--params-file", params])
        XCTAssertEqual(p.status, 2)
        XCTAssertEqual(lastLine(p.stderr), "error: cannot read the params file \(params): it is a FIFO (named pipe) that nothing is writing to")
    }

    func testACSVFileParameterThatIsAFIFOIsRefusedAtOnce() throws {
        let rows = try fifo("rows.csv")
        let recipe = try cli.file("c.lua", """
            recipe { name = "c", params = { rows = { type = "file" } } }
            local ok, err = pcall(function() for r in csv.rows(params.rows) do end end)
            print(ok, err)
            """)
        let r = try cli.run(["run", recipe, "--param", "rows=\(rows)"])
        XCTAssertEqual(r.status, 0, r.stderr)
        XCTAssertTrue(r.stdout.hasPrefix("false\t"), r.stdout)
        XCTAssertTrue(r.stdout.hasSuffix("c.lua:2: csv.rows: cannot open '\(rows)': it is a FIFO (named pipe) that nothing is writing to\n"), r.stdout)
    }

    func testAVaultKeyFileThatIsAFIFOStopsARunAtOnce() throws {
        let vault = try VaultCLI(testCase: self)
        try vault.initialise()
        XCTAssertEqual(try vault.run(["set", "a", "--key-file", vault.keyFile], stdin: "v").status, 0)
        let key = vault.harness.root.appendingPathComponent("key.fifo").path
        XCTAssertEqual(mkfifo(key, 0o600), 0)
        let recipe = try vault.harness.file("s.lua", #"recipe { name = "s", secrets = { "a" } } print(vault.secret("a"))"#)
        vault.harness.extraEnvironment = ["HUBSCRIPT_VAULT_KEY_FILE": key]
        let r = try vault.harness.run(["run", recipe])
        XCTAssertEqual(r.status, 2)
        XCTAssertEqual(lastLine(r.stderr), "error: the recipe declares the secret 'a', which cannot be read: vault_error: the key file \(key) is a FIFO (named pipe), not a regular file: give a file holding the key (mode 0600)")
    }
}
