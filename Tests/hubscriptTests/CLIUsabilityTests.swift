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

/// `hubscript completion bash|zsh`: valid scripts (`bash -n`, `zsh -n`), exercised in a
/// real bash and, through zsh's bash-completion layer, in a real zsh.
final class CompletionCLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// Runs `shell args…` in the test's folder (HOME there too, so zsh's compinit writes
    /// its dump file there): exit status, stdout and stderr.
    func shell(_ shell: String, _ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        guard FileManager.default.isExecutableFile(atPath: shell) else { throw XCTSkip("no \(shell)") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: shell)
        p.arguments = args
        p.currentDirectoryURL = cli.root
        var environment = ProcessInfo.processInfo.environment
        environment["HOME"] = cli.root.path
        environment["ZDOTDIR"] = cli.root.path
        p.environment = environment
        p.standardInput = FileHandle.nullDevice
        let done = try CLIHarness.collect(p, timeout: 20)
        return (done.status, String(decoding: done.stdout, as: UTF8.self), String(decoding: done.stderr, as: UTF8.self))
    }

    /// Saves `hubscript completion SHELL` as `completion.SHELL`.
    func saveScript(_ name: String) throws {
        let script = try cli.hubscript("completion", name)
        XCTAssertEqual(script.status, 0)
        XCTAssertEqual(script.stderrWithoutRunStart, "")
        try cli.file("completion.\(name)", script.stdout)
    }

    /// What `_hubscript` offers for the words typed so far (the last is being completed).
    func complete(_ words: [String]) throws -> String {
        try saveScript("bash")
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let bash = try shell("/bin/bash", ["-c", "source completion.bash; COMP_WORDS=(hubscript \(quoted)); COMP_CWORD=\(words.count); _hubscript; echo \"${COMPREPLY[*]}\""])
        XCTAssertEqual(bash.stderr, "")
        return bash.stdout
    }

    func testBashCompletesSubcommandsOptionsAndRecipes() throws {
        try cli.file("offboard.lua", "recipe { name = \"o\" }\n")
        XCTAssertEqual(try complete(["ru"]), "run runs\n")
        XCTAssertEqual(try complete(["off"]), "offboard.lua\n")
        XCTAssertEqual(try complete(["run", "offboard.lua", "--pa"]), "--param --params-file\n")
        XCTAssertEqual(try complete(["offboard.lua", "--no"]), "--no-progress\n")
        XCTAssertEqual(try complete(["runs", "re"]), "resume repair\n")
        XCTAssertEqual(try complete(["runs", "resume", "run_1", "--q"]), "--quiet\n")
        XCTAssertEqual(try complete(["sandbox", "serve", "--rate"]), "--rate-limits\n")
        XCTAssertEqual(try complete(["completion", ""]), "bash zsh\n")
    }

    func testBashScriptIsValidBashAndRegistersTheFunction() throws {
        try saveScript("bash")
        let syntax = try shell("/bin/bash", ["-n", "completion.bash"])
        XCTAssertEqual(syntax.status, 0, syntax.stderr)
        XCTAssertEqual(syntax.stderr, "")
        let registered = try shell("/bin/bash", ["-c", "source completion.bash && complete -p hubscript"])
        XCTAssertEqual(registered.stdout, "complete -o bashdefault -o filenames -F _hubscript hubscript\n")
        XCTAssertEqual(registered.stderr, "")
    }

    func testZshScriptIsValidZshAndCompletesThroughBashcompinit() throws {
        let zsh = "/usr/bin/zsh"
        try saveScript("zsh")
        let syntax = try shell(zsh, ["-n", "completion.zsh"])
        XCTAssertEqual(syntax.status, 0, syntax.stderr)
        XCTAssertEqual(syntax.stderr, "")
        // Sourced in a bare zsh (no .zshrc: the script starts the completion system), the
        // completer is registered with compdef, and bashcompinit's compgen runs it with
        // COMP_WORDS and COMP_CWORD as `_bash_complete` sets them (outside a completion
        // widget zsh's own `words` and `CURRENT` cannot be set); the candidates are then
        // matched against the word as compadd would.
        let sourced = try shell(zsh, ["-f", "-c", """
            source ./completion.zsh
            print -r -- "registered: $_comps[hubscript]"
            query() {
              local -a COMP_WORDS COMPREPLY found; local COMP_CWORD word=${@[-1]}
              COMP_WORDS=("$@"); COMP_CWORD=$(($# - 1))
              found=(${(f)"$(compgen -F _hubscript -- "$word")"})
              print -r -- "$* ->" ${(M)found:#${word}*}
            }
            query hubscript ru
            query hubscript runs re
            query hubscript runs resume run_1 --q
            query hubscript completion ''
            """])
        XCTAssertEqual(sourced.stderr, "")
        XCTAssertEqual(sourced.stdout, """
            registered: _bash_complete -o filenames -o bashdefault -F _hubscript
            hubscript ru -> run runs
            hubscript runs re -> resume repair
            hubscript runs resume run_1 --q -> --quiet
            hubscript completion  -> bash zsh

            """)
        XCTAssertEqual(sourced.status, 0)
    }

    func testZshScriptLoadsTheBashOneThroughBashcompinit() throws {
        let zsh = try cli.hubscript("completion", "zsh")
        let bash = try cli.hubscript("completion", "bash")
        XCTAssertEqual(zsh.stdout, """
        # zsh completion for hubscript (hubscript completion zsh)
        (( $+functions[compdef] )) || { autoload -U +X compinit && compinit }
        (( $+functions[complete] )) || { autoload -U +X bashcompinit && bashcompinit }

        """ + bash.stdout)
        assertResult(try cli.hubscript("completion", "fish"), stdout: "", stderr: """
        hubscript completion: unknown shell 'fish' (bash or zsh)
        Run 'hubscript completion --help' for usage.

        """, exitCode: 2)
    }
}
