import Foundation
import XCTest

/// What `hubscript trust|verify PATH` and `hubscript LIB:RECIPE` say when the path or the
/// recipe is wrong (docs/libraries.md): a CI check of a misspelt path must not pass, and a
/// broken manifest must be shown as such, not as a missing recipe.
final class TrustPathMessageTests: XCTestCase {
    var cli: CLIHarness!
    var config: String!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        try cli.file("shared/ops/offboard.lua", "recipe { name = \"offboard\", needs = { \"users.list\" } }\nprint('offboard')\n")
        config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, libraries = { ops = "shared/ops" } }
            """)
        XCTAssertEqual(try hubscript("trust").status, 0)
    }

    func hubscript(_ args: String...) throws -> CLIHarness.Result { try cli.run(args + ["--config", config]) }

    /// `verify shared/ops/offbaord.lua` (a typo: no such file, never pinned) prints
    /// `ok: 0 files of ops/offbaord.lua match` and exits 0, so a CI check of a misspelt
    /// path passes. Expected: a usage error (exit 2) naming the missing file.
    func testVerifyOfAFileThatDoesNotExistDoesNotPass() throws {
        let r = try hubscript("verify", cli.root.appendingPathComponent("shared/ops/offbaord.lua").path)
        XCTAssertNotEqual(r.status, 0, r.output)
    }

    /// A library file whose manifest is invalid is reported as missing ("library ops has
    /// no recipe 'bad' (recipes: offboard)") instead of with its manifest error, which
    /// `hubscript run shared/ops/bad.lua` shows. Expected: the manifest error.
    func testALibraryRecipeWithABadManifestShowsTheManifestError() throws {
        try cli.file("shared/ops/bad.lua", "recipe { name = \"bad\", needs = { \"USERS.LIST\" } }\nprint('bad')\n")
        XCTAssertEqual(try hubscript("trust").status, 0)
        let r = try hubscript("ops:bad")
        XCTAssertEqual(r.status, 2, r.output)
        XCTAssertFalse(r.stderr.contains("has no recipe 'bad'"), r.stderr)
        XCTAssertTrue(r.stderr.contains("manifest: needs[1]"), r.stderr)
    }
}
