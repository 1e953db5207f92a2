import Foundation
import XCTest

/// Usage mistakes get a suggestion, help shows a recipe's
/// parameters, no Foundation error text reaches people.
final class CLIUsabilityTests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    func testUnknownSubcommandSuggestsTheClosest() throws {
        assertResult(try cli.hubscript("rnu", "x.lua"), stdout: "", stderr: """
        hubscript: unknown subcommand 'rnu' (did you mean 'run'?)
        Run 'hubscript --help' for the list of subcommands.

        """, exitCode: 2)
        assertResult(try cli.hubscript("sandbox", "serv"), stdout: "", stderr: """
        hubscript sandbox: unknown subcommand 'serv' (did you mean 'serve'?)
        Run 'hubscript sandbox --help' for the list.

        """, exitCode: 2)
    }

    func testUnknownFlagSuggestsTheClosest() throws {
        assertResult(try cli.hubscript("run", "a.lua", "--parm", "x=1"), stdout: "", stderr: """
        hubscript run: unknown option '--parm' (did you mean '--param'?)
        Run 'hubscript run --help' for usage.

        """, exitCode: 2)
        assertResult(try cli.hubscript("run", "a.lua", "-json"), stdout: "", stderr: """
        hubscript run: unknown option '-json' (did you mean '--json'?)
        Run 'hubscript run --help' for usage.

        """, exitCode: 2)
    }

    func testPositionalKeyValueSuggestsParam() throws {
        try cli.file("a.lua", "recipe { name = \"a\", params = { user = { type = \"string\" } } }\nprint('BODY RAN')\n")
        assertResult(try cli.hubscript("run", "a.lua", "user=ada"), stdout: "", stderr: """
        hubscript run: unexpected argument 'user=ada'; to set a parameter, write --param user=ada
        Run 'hubscript run --help' for usage.

        """, exitCode: 2)
        assertResult(try cli.hubscript("a.lua", "user=ada"), stdout: "", stderr: """
        hubscript run: unexpected argument 'user=ada'; to set a parameter, write --param user=ada
        Run 'hubscript run --help' for usage.

        """, exitCode: 2)
    }

    func testRecipeHelpShowsItsParameters() throws {
        try cli.file("off.lua", """
        recipe {
          name = "offboard", version = "2.0",
          params = { user = { type = "string", required = true, description = "the user's id" } },
          needs = { "users.manage" },
        }
        print("BODY RAN")
        """)
        let result = try cli.hubscript("off.lua", "--help")
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stderrWithoutRunStart, "")
        XCTAssertEqual(result.stdout, """
        RECIPE: offboard 2.0

        Parameters:
          user  string    required  — the user's id

        Needs: users.manage
        Limits: (defaults)

        Set parameters with --param name=value (a list takes a,b,c or one --param per item).


        """ + CLITests.runHelp)
    }

    func testAFolderAsRecipeHasNoFoundationText() throws {
        assertResult(try cli.hubscript("run", "."), stdout: "",
                     stderr: "error: cannot read .: it is a folder, not a file\n", exitCode: 2)
        assertResult(try cli.hubscript("check", "."), stdout: "FAIL .\n     cannot read .: it is a folder, not a file\n",
                     stderr: "", exitCode: 1)
        assertResult(try cli.hubscript("describe", "."), stdout: "",
                     stderr: "error: cannot read .: it is a folder, not a file\n", exitCode: 2)
    }

    func testAFolderOrAMissingFileAsPlanHasNoFoundationText() throws {
        let folderPath = cli.root.path
        assertResult(try cli.hubscript("apply", "."), stdout: "",
                     stderr: "error: cannot read the plan \(folderPath): it is a folder, not a file\n", exitCode: 2)
        assertResult(try cli.hubscript("apply", "nope.json"), stdout: "",
                     stderr: "error: cannot read the plan \(folderPath)/nope.json: No such file or directory\n", exitCode: 2)
        try cli.file("p.lua", "recipe { name = \"p\" }\n")
        assertResult(try cli.hubscript("run", "p.lua", "--params-file", "."), stdout: "",
                     stderr: "error: cannot read the params file .: it is a folder, not a file\n", exitCode: 2)
    }

    func testAFileAsStateDirHasNoFoundationText() throws {
        try cli.file("a.lua", "recipe { name = \"a\" }\n")
        try cli.file("state", "not a folder")
        let result = try cli.hubscript("run", "a.lua", "--state-dir", "state")
        XCTAssertEqual(result.status, 2)
        XCTAssertFalse(result.stderrWithoutRunStart.contains("NSCocoaErrorDomain"), result.stderrWithoutRunStart)
        XCTAssertTrue(result.stderrWithoutRunStart.hasSuffix("/state is a file, not a folder (set --state-dir to a writable folder)\n"), result.stderrWithoutRunStart)
    }
}
