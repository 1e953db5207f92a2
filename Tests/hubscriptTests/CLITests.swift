import Foundation
import XCTest

/// The CLI as a user sees it: exact stdout, stderr and exit codes (docs/design.md
/// "Output": 0 success, 1 the recipe failed, 2 usage or configuration, 4 a limit).
final class CLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    static let mainHelp = """
    OVERVIEW: Run sandboxed Lua recipes against the Substratal Hub.

    USAGE: hubscript <subcommand> [options]
           hubscript FILE.lua [run options]   (shorthand for 'hubscript run FILE.lua')
           hubscript LIB:RECIPE [run options] (recipe RECIPE.lua of library LIB, pinned in hubscript.lock)

    SUBCOMMANDS:
      run         Run a recipe.
      check       Check recipes without running them: syntax, manifest, names, calls, permissions.
      test        Run recipe tests (*_test.lua) against fresh in-memory sandboxes.
      new         Create a recipe (NAME.lua) and its test (NAME_test.lua) from a template.
      trust       Pin the configuration's libraries (SHA-256 of every file) in hubscript.lock.
      verify      Check the configuration's libraries against hubscript.lock (exit 0 or 1, for CI).
      describe    Show a recipe's manifest: parameters, permissions, limits.
      plan        Run a recipe with reads live and writes recorded, not sent; print or save the plan.
      apply       Apply a saved plan: run its recipe again, sending only the planned writes.
      approve     Approve a saved plan as a signed-in Hub user (the two-person rule before apply).
      reject      Reject a saved plan with a reason: it can no longer be applied.
      plans       List and show saved plans with their approvals.
      runs        List, show, resume, repair and prune journalled runs.
      login       Sign in to a profile that uses a user session.
      logout      Sign out of a session profile and delete its stored credentials.
      whoami      Show who a profile is at its Hub, what it may do, and where its secrets come from.
      doctor      Check the configuration, vault, journal, Hub and Dispatch; say what to fix.
      keys        Show API keys' permissions as a ready line of profile config.
      sandbox     Serve or reset the built-in sandbox Hub.
      dispatch    Check the profile's Dispatch (phone notifications).
      vault       Keep secrets and private files encrypted at rest.
      jobs        List, fire and serve the scheduled jobs of the configuration.
      listen      Receive Hub webhook deliveries on 127.0.0.1 and run the configuration's triggers.
      docs        Print reference documentation generated from the code.
      console     Serve the operator console: runs, jobs, triggers and plans in a browser, on 127.0.0.1.
      completion  Print a shell completion script (bash, zsh or fish).
      eval        Run one Lua expression or statement with the recipe modules; print its value as JSON.
      repl        An interactive Lua prompt with the recipe modules: reads live, writes planned.

    OPTIONS:
      --version       Show the version.
      --color <when>  Colour for people: auto (on a terminal, unless NO_COLOR is set), always or never.
      -h, --help      Show help information.

    See 'hubscript <subcommand> --help' for a subcommand's options.

    """

    static let runHelp = """
    OVERVIEW: Run a recipe.

    USAGE: hubscript run FILE|LIB:RECIPE [--param name=value]… [--params-file F.json] [--json] [--timeout S] [--allow perm,…] [--dry-run] [--run-id ID]

    LIB:RECIPE runs recipe RECIPE.lua of library LIB of the configuration
    (libraries = { LIB = "folder" or "git+URL@COMMIT" }), pinned in hubscript.lock.

    Exit codes: 0 success, 1 the recipe failed, 2 usage or configuration error
    (including a manifest or parameter problem, or library files that no longer match
    hubscript.lock: nothing of the recipe runs), 3 capability denied, needs beyond
    --allow, or the Hub refuses the profile's credential, 4 a limit stopped the run,
    7 the Hub could not be reached.

    OPTIONS:
      --param <name=value>  Set a recipe parameter. (repeatable)
      --params-file <file>  Read parameters from a JSON object.
      --json                Write NDJSON events (prints, logs, writes, summary) to stdout.
      --timeout <seconds>   Wall-clock limit for the run (overrides the manifest).
      --max-writes <n>      Stop before the first write past n (with limits.writes, the lower wins).
      --lib <dir>           Add a folder that require() may load modules from. (repeatable)
      --allow <perm,perm>   Refuse the recipe (exit 3) if its needs go beyond these permissions. (repeatable)
      --out <dir>           Where export.* writes (default: runs/<run id>/ in the state directory).
      --key-file <path>     Open the vault with this key file (mode 0600) if the run needs it (default: $HUBSCRIPT_VAULT_KEY, $HUBSCRIPT_VAULT_KEY_FILE, $HUBSCRIPT_VAULT_PASSPHRASE).
      --quiet               No sandbox notice, no progress line, no rate-limit notices.
      --verbose             Show log.debug, each Hub call with its status and time, retries and rate-limit waits.
      --no-progress         No progress line (it is drawn only on a terminal).
      --profile <name>      The profile to use (default: $HUBSCRIPT_PROFILE, the config's default_profile, or the built-in sandbox).
      --config <file>       The configuration file (default: $HUBSCRIPT_CONFIG, ./hubscript.config.lua, ~/.config/hubscript/config.lua).
      --state-dir <dir>     Where credentials, the journal and the sandbox live (default: $HUBSCRIPT_STATE_DIR, $XDG_STATE_HOME/hubscript).
      --dry-run             Read live, record writes without sending them, print the plan.
      --run-id <id>         Run under this id; if the journal has it, resume it (done writes replay).
      --force               With --run-id: resume even if the recipe file changed.
      -h, --help            Show help information.

    """

    static let timeoutMessage =
        "error: limit exceeded: timeout (1 s); raise it with --timeout or limits.timeout in the recipe manifest\n"

    // MARK: Help and usage

    func testVersion() throws {
        assertResult(try cli.hubscript("--version"), stdout: "hubscript 0.1.0\n", stderr: "", exitCode: 0)
    }

    func testHelp() throws {
        assertResult(try cli.hubscript("--help"), stdout: Self.mainHelp, stderr: "", exitCode: 0)
        assertResult(try cli.hubscript("-h"), stdout: Self.mainHelp, stderr: "", exitCode: 0)
        assertResult(try cli.hubscript("help"), stdout: Self.mainHelp, stderr: "", exitCode: 0)
    }

    func testNoArgumentsPrintsHelpToStderr() throws {
        assertResult(try cli.hubscript(), stdout: "", stderr: Self.mainHelp, exitCode: 2)
    }

    /// `hubscript X.lua` goes straight to `run` before the subcommands are looked at: no
    /// subcommand may have a name that a recipe's could be.
    func testNoSubcommandIsNamedLikeARecipeFile() throws {
        let names = Self.mainHelp.components(separatedBy: "SUBCOMMANDS:\n")[1].components(separatedBy: "\n\n")[0]
            .split(separator: "\n").compactMap { $0.split(separator: " ").first.map(String.init) }
        XCTAssertTrue(names.contains("run"), "\(names)")
        XCTAssertGreaterThan(names.count, 10)
        XCTAssertEqual(names.filter { $0.hasSuffix(".lua") }, [])
    }

    func testRunHelp() throws {
        assertResult(try cli.hubscript("run", "--help"), stdout: Self.runHelp, stderr: "", exitCode: 0)
    }

    func testCheckAndDescribeHelp() throws {
        assertResult(try cli.hubscript("check", "--help"), stdout: """
        OVERVIEW: Check recipes without running them: syntax, manifest, names, calls, permissions.

        USAGE: hubscript check FILE|LIB:RECIPE… [--lib DIR]… [--json] | --config [FILE] [--json]

        Prints one line per file, and under it each finding as FILE:LINE:COLUMN: error|warning:
        MESSAGE. Errors: an undeclared global read or written, an unknown module field
        (hub.users.lst), a call whose permission needs does not declare, params.x not in
        the manifest, a wrong argument count. Warnings: a declared parameter never read,
        an unused local. Modules the recipe requires are checked too. Exits 0 if no file
        has an error (warnings are printed), 2 if a manifest's needs names an unknown
        permission, 1 if any file fails otherwise.

        With --config, checks the configuration's jobs and triggers instead, as
        'hubscript jobs check' does (see its --help).

        OPTIONS:
          --json             JSON objects on stdout: a "finding" each, a "check" a file, a summary.
          --lib <dir>        Add a folder that require() may load modules from (as run does). (repeatable)
          --config           Check the configuration's jobs and triggers instead (as hubscript jobs check): FILE, else the one found.
          --profile <name>   The profile to use (default: $HUBSCRIPT_PROFILE, the config's default_profile, or the built-in sandbox).
          --state-dir <dir>  Where credentials, the journal and the sandbox live (default: $HUBSCRIPT_STATE_DIR, $XDG_STATE_HOME/hubscript).
          -h, --help         Show help information.

        """, stderr: "", exitCode: 0)
        assertResult(try cli.hubscript("describe", "-h"), stdout: """
        OVERVIEW: Show a recipe's manifest: parameters, permissions, limits.

        USAGE: hubscript describe FILE|LIB:RECIPE [--json] [--profile P] [--config F]

        Each Dispatch target the manifest declares (targets = { "ops" }) is shown with the
        URL and token the configuration binds it to for the profile, when a configuration
        is found: that is everywhere the recipe can send. A configuration that cannot be
        read, or a profile it does not define, is an error (exit 2).

        OPTIONS:
          --json            Print the manifest as JSON.
          --profile <name>  The profile to use (default: $HUBSCRIPT_PROFILE, the config's default_profile, or the built-in sandbox).
          --config <file>   The configuration file (default: $HUBSCRIPT_CONFIG, ./hubscript.config.lua, ~/.config/hubscript/config.lua).
          -h, --help        Show help information.

        """, stderr: "", exitCode: 0)
    }

    func testUnknownSubcommand() throws {
        assertResult(try cli.hubscript("frobnicate"), stdout: "", stderr: """
        hubscript: unknown subcommand 'frobnicate'
        Run 'hubscript --help' for the list of subcommands.

        """, exitCode: 2)
    }

    func testRunUsageErrors() throws {
        let cases: [([String], String)] = [
            (["run"], "hubscript run: missing the recipe FILE"),
            (["run", "a.lua", "b.lua"], "hubscript run: expected one recipe FILE, got 2"),
            (["run", "a.lua", "--bogus"], "hubscript run: unknown option '--bogus'"),
            (["run", "a.lua", "-x"], "hubscript run: unknown option '-x'"),
            (["run", "a.lua", "--timeout", "0"], "hubscript run: --timeout takes a positive number of seconds, got '0'"),
            (["run", "a.lua", "--timeout"], "hubscript run: option '--timeout' needs a value (seconds)"),
            (["run", "a.lua", "--json=yes"], "hubscript run: option '--json' takes no value"),
            (["run", "a.lua", "--param", "user"], "hubscript run: --param takes name=value, got 'user'"),
            (["run", "a.lua", "--params-file", "a", "--params-file", "b"], "hubscript run: option '--params-file' given more than once"),
        ]
        for (args, message) in cases {
            let result = try CLIHarness.run(args, in: cli.root)
            assertResult(result, stdout: "", stderr: message + "\nRun 'hubscript run --help' for usage.\n", exitCode: 2)
        }
    }

    func testRunOfMissingFile() throws {
        assertResult(try cli.hubscript("run", "nope.lua"), stdout: "",
                     stderr: "error: cannot read nope.lua: No such file or directory\n", exitCode: 2)
    }

    // MARK: run

    func testRunShippedHelloWithParams() throws {
        let result = try cli.hubscriptInRepo("run", "recipes/examples/hello.lua", "--param", "name=Ada", "--param", "times=2")
        assertResult(result, stdout: """
        hello, Ada!
        hello, Ada!
        {"greeted":"Ada","times":2}

        """, stderr: "[info] greeted name=Ada times=2\n", exitCode: 0)
    }

    func testShorthandRunsTheFile() throws {
        let result = try cli.hubscriptInRepo("recipes/examples/hello.lua", "--param=name=Grace Hopper")
        assertResult(result, stdout: """
        hello, Grace Hopper!
        {"greeted":"Grace Hopper","times":1}

        """, stderr: "[info] greeted name=\"Grace Hopper\" times=1\n", exitCode: 0)
    }

    func testParamsFileAndCommandLineOverride() throws {
        try cli.file("p.json", #"{"name": "file", "times": 2}"#)
        let hello = CLIHarness.repoRoot.appendingPathComponent("recipes/examples/hello.lua").path
        let result = try cli.hubscript("run", hello, "--params-file", "p.json", "--param", "times=1")
        assertResult(result, stdout: "hello, file!\n{\"greeted\":\"file\",\"times\":1}\n",
                     stderr: "[info] greeted name=file times=1\n", exitCode: 0)
    }

    func testBadParamValue() throws {
        let result = try cli.hubscriptInRepo("run", "recipes/examples/hello.lua", "--param", "times=abc")
        assertResult(result, stdout: "", stderr: "error: parameter 'times' must be an integer, got 'abc'\n", exitCode: 2)
    }

    func testUnknownParam() throws {
        let result = try cli.hubscriptInRepo("recipes/examples/hello.lua", "--param", "who=x")
        assertResult(result, stdout: "",
                     stderr: "error: unknown parameter 'who' (this recipe takes: name, times)\n", exitCode: 2)
    }

    func testMissingRequiredParamRunsNothing() throws {
        try cli.file("need.lua", """
        recipe { name = "need", params = { user = { type = "string", required = true, description = "usr_… id" } } }
        print("BODY RAN")
        """)
        assertResult(try cli.hubscript("run", "need.lua"), stdout: "",
                     stderr: "error: missing required parameter 'user' (string: usr_… id); pass --param user=…\n", exitCode: 2)
    }

    func testMissingFileParam() throws {
        try cli.file("f.lua", """
        recipe { name = "f", params = { input = { type = "file" } } }
        print("BODY RAN")
        """)
        assertResult(try cli.hubscript("run", "f.lua", "--param", "input=users.csv"), stdout: "",
                     stderr: "error: parameter 'input': file users.csv does not exist\n", exitCode: 2)
        try cli.file("users.csv", "id\n")
        let path = cli.root.appendingPathComponent("users.csv").standardizedFileURL.path
        try cli.file("g.lua", """
        recipe { name = "g", params = { input = { type = "file" } } }
        print(params.input == \(luaString(path)))
        """)
        assertResult(try cli.hubscript("run", "g.lua", "--param", "input=users.csv"), stdout: "true\n", stderr: "", exitCode: 0)
    }

    func testSyntaxErrorShowsFileAndLine() throws {
        try cli.file("syntax.lua", """
        recipe { name = "syntax" }
        print("BODY RAN")
        local x = = 1
        """)
        assertResult(try cli.hubscript("run", "syntax.lua"), stdout: "",
                     stderr: "error: syntax.lua:3: unexpected symbol near '='\n", exitCode: 2)
    }

    func testRuntimeErrorShowsFileLineAndTraceback() throws {
        try cli.file("lib/fail.lua", """
        recipe { name = "fail" }
        print("before")
        local function explode(n)
          error("exploded with " .. n)
        end
        explode(3)
        """)
        assertResult(try cli.hubscript("run", "lib/fail.lua"), stdout: "before\n", stderr: """
        error: lib/fail.lua:4: exploded with 3
        stack traceback:
        \t[C]: in function 'error'
        \tlib/fail.lua:4: in local 'explode'
        \tlib/fail.lua:6: in main chunk
        \t[C]: in ?

        """, exitCode: 1)
    }

    func testStrictGlobalErrorThroughTheCLI() throws {
        try cli.file("g.lua", "recipe { name = \"g\" }\ncount = 1\n")
        let result = try cli.hubscript("g.lua")
        XCTAssertEqual(result.status, 1)
        XCTAssertTrue(result.stderrWithoutRunStart.hasPrefix(
            "error: g.lua:2: recipe attempted to assign to undeclared global 'count' (declare it with 'local')\nstack traceback:\n"),
            result.stderrWithoutRunStart)
    }

    /// A table the recipe raises points at its line, as a string error does.
    func testStructuredErrorFromTheRecipe() throws {
        for (raise, message) in [("error({ code = 'E1', message = 'table error' })", "E1: table error"),
                                 ("error({ 1, 2 })", "error object: [1,2]")] {
            try cli.file("s.lua", "recipe { name = \"s\" }\n\(raise)\n")
            assertResult(try cli.hubscript("s.lua"), stdout: "", stderr: """
                error: s.lua:2: \(message)
                stack traceback:
                \t[C]: in function 'error'
                \ts.lua:2: in main chunk
                \t[C]: in ?

                """, exitCode: 1)
        }
    }

    func testManifestErrorRunsNothing() throws {
        try cli.file("m.lua", """
        recipe { name = "m", colour = "red" }
        print("BODY RAN")
        """)
        assertResult(try cli.hubscript("run", "m.lua"), stdout: "", stderr:
            "error: m.lua:1: manifest: unknown key 'colour' in the manifest (allowed: name, version, description, params, needs, secrets, targets, limits)\n",
            exitCode: 2)
    }

    func testLibraryFolderForRequire() throws {
        try cli.file("shared/greet.lua", "return { hi = function(n) return 'hi ' .. n end }")
        try cli.file("r.lua", "recipe { name = \"r\" }\nprint(require('greet').hi('lib'))\n")
        assertResult(try cli.hubscript("run", "r.lua", "--lib", "shared"), stdout: "hi lib\n", stderr: "", exitCode: 0)
    }

    // MARK: --json

    func testJSONOutputIsNDJSONWithSummaryLast() throws {
        let result = try cli.hubscriptInRepo("run", "recipes/examples/hello.lua", "--json", "--param", "times=2")
        XCTAssertEqual(result.status, 0)
        XCTAssertEqual(result.stderrWithoutRunStart, "")
        let events = try result.stdout.split(separator: "\n").map { line in
            try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any], String(line))
        }
        XCTAssertEqual(events.map { $0["type"] as? String }, ["start", "print", "print", "log", "print", "summary"])
        let lines = Array(JSONLines.withoutTimestamps(result.stdout).dropFirst())
        XCTAssertEqual(Array(lines.prefix(4)), [
            #"{"text":"hello, world!","type":"print"}"#,
            #"{"text":"hello, world!","type":"print"}"#,
            #"{"fields":{"name":"world","times":2},"level":"info","message":"greeted","type":"log"}"#,
            #"{"text":"{\"greeted\":\"world\",\"times\":2}","type":"print"}"#,
        ])
        let summary = try XCTUnwrap(events.last)
        XCTAssertEqual(summary["status"] as? String, "ok")
        XCTAssertEqual(summary["exit_code"] as? Int, 0)
        XCTAssertNotNil(summary["duration_ms"] as? Int)
        XCTAssertGreaterThan(summary["memory_peak_bytes"] as? Int ?? 0, 0)
        XCTAssertEqual(Set(summary.keys), ["type", "ts", "status", "exit_code", "duration_ms", "memory_peak_bytes", "run_id",
                                           "reads", "reads_replayed", "writes", "replayed", "planned", "failed", "exports",
                                           "output_folder", "schema_version"])
        XCTAssertEqual(summary["writes"] as? Int, 0)
    }

    func testJSONOutputOfAFailure() throws {
        try cli.file("f.lua", "recipe { name = \"f\" }\nprint(\"x\")\nerror(\"bad\")\n")
        let result = try cli.hubscript("run", "f.lua", "--json")
        XCTAssertEqual(result.status, 1)
        XCTAssertEqual(result.stderrWithoutRunStart, "")
        let lines = Array(JSONLines.withoutTimestamps(result.stdout).dropFirst())
        XCTAssertEqual(lines.count, 3)
        XCTAssertEqual(lines.first, #"{"text":"x","type":"print"}"#)
        let error = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines[1].utf8)) as? [String: Any])
        XCTAssertEqual(error["type"] as? String, "error")
        XCTAssertEqual(error["kind"] as? String, "runtime")
        XCTAssertEqual(error["message"] as? String, "f.lua:3: bad")
        XCTAssertTrue((error["traceback"] as? String ?? "").hasPrefix("stack traceback:"))
        let summary = try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(lines[2].utf8)) as? [String: Any])
        XCTAssertEqual(summary["type"] as? String, "summary")
        XCTAssertEqual(summary["status"] as? String, "failed")
        XCTAssertEqual(summary["exit_code"] as? Int, 1)
    }

    func testJSONOutputOfASetupFailure() throws {
        try cli.file("m.lua", "recipe { name = 1 }\n")
        let result = try cli.hubscript("run", "m.lua", "--json")
        // The events on stdout; the same error for a person, one line on stderr.
        assertResult(result, stdout: result.stdout, stderr: "error: m.lua:1: manifest: 'name' must be a non-empty string\n", exitCode: 2)
        XCTAssertEqual(JSONLines.withoutTimestamps(result.stdout), [
            #"{"kind":"load","message":"m.lua:1: manifest: 'name' must be a non-empty string","type":"error"}"#,
            #"{"exit_code":2,"failed":0,"planned":0,"reads":0,"replayed":0,"run_id":null,"schema_version":1,"status":"failed","type":"summary","writes":0}"#,
        ])
    }

    // MARK: check

    func testCheckSeveralFiles() throws {
        try cli.file("good.lua", "recipe { name = \"good\" }\nprint(1)\n")
        try cli.file("syntax.lua", "recipe { name = \"syntax\" }\nif then\n")
        try cli.file("manifest.lua", "recipe { name = \"m\", needs = \"all\" }\n")
        let result = try cli.hubscript("check", "good.lua", "syntax.lua", "manifest.lua", "missing.lua")
        assertResult(result, stdout: """
        ok   good.lua
        FAIL syntax.lua
             syntax.lua:2: unexpected symbol near 'then'
        FAIL manifest.lua
             manifest.lua:1: manifest: 'needs' must be a list of permission keys such as { "users.manage" }
        FAIL missing.lua
             cannot read missing.lua: No such file or directory
        1 passed, 3 failed

        """, stderr: "", exitCode: 1)
    }

    func testCheckAllGood() throws {
        try cli.file("a.lua", "recipe { name = \"a\" }\nerror('never runs')\n")
        assertResult(try cli.hubscript("check", "a.lua"), stdout: "ok   a.lua\n", stderr: "", exitCode: 0)
        assertResult(try cli.hubscriptInRepo("check", "recipes/examples/hello.lua", "recipes/examples/hello.lua"),
                     stdout: "ok   recipes/examples/hello.lua\nok   recipes/examples/hello.lua\n2 passed, 0 failed\n",
                     stderr: "", exitCode: 0)
    }

    func testCheckUsage() throws {
        assertResult(try cli.hubscript("check"), stdout: "", stderr: """
        hubscript check: missing the recipe FILE(s) to check
        Run 'hubscript check --help' for usage.

        """, exitCode: 2)
    }

    // MARK: describe

    func testDescribeShippedHello() throws {
        assertResult(try cli.hubscriptInRepo("describe", "recipes/examples/hello.lua"), stdout: """
        hello 1.0.0
          Greets someone; shows params, log and json.

        Parameters:
          name   string    default "world"  — who to greet
          times  integer   default 1

        Needs: (no permissions)
        Limits: (defaults)

        """, stderr: "", exitCode: 0)
    }

    func testDescribeJSON() throws {
        assertResult(try cli.hubscriptInRepo("describe", "--json", "recipes/examples/hello.lua"), stdout: """
        {"description":"Greets someone; shows params, log and json.","limits":{},"name":"hello","needs":[],"params":{"name":{"default":"world","description":"who to greet","required":false,"type":"string"},"times":{"default":1,"required":false,"type":"integer"}},"secrets":[],"targets":[],"version":"1.0.0"}

        """, stderr: "", exitCode: 0)
    }

    func testDescribeDoesNotRunTheBody() throws {
        try cli.file("d.lua", """
        recipe {
          name = "d",
          params = { user = { type = "string", required = true } },
          needs = { "users.view" },
          limits = { writes = 3, timeout = 2.5 },
        }
        print("BODY RAN")
        while true do end
        """)
        assertResult(try cli.hubscript("describe", "d.lua"), stdout: """
        d

        Parameters:
          user  string    required

        Needs: users.view
        Limits: writes 3, timeout 2.5 s

        """, stderr: "", exitCode: 0)
    }

    func testDescribeErrors() throws {
        try cli.file("bad.lua", "print('x')\n")
        assertResult(try cli.hubscript("describe", "bad.lua"), stdout: "",
                     stderr: "error: bad.lua:1: a recipe must start with its manifest: recipe { name = …, … }\n", exitCode: 2)
        assertResult(try cli.hubscript("describe"), stdout: "", stderr: """
        hubscript describe: expected one recipe FILE
        Run 'hubscript describe --help' for usage.

        """, exitCode: 2)
    }

    // MARK: Limits

    func testInstructionLimitExitsWith4() throws {
        try cli.file("spin.lua", """
        recipe { name = "spin", limits = { instructions = 100000 } }
        print("start")
        while true do end
        """)
        assertResult(try cli.hubscript("spin.lua"), stdout: "start\n", stderr:
            "error: limit exceeded: instructions (100000); raise limits.instructions in the recipe manifest if the work is expected\n",
            exitCode: 4)
    }

    func testMemoryLimitExitsWith4() throws {
        try cli.file("mem.lua", """
        recipe { name = "mem", limits = { memory_mb = 16 } }
        local t = {} while true do t[#t + 1] = { #t } end
        """)
        assertResult(try cli.hubscript("mem.lua"), stdout: "", stderr:
            "error: limit exceeded: memory (16 MiB); raise limits.memory_mb in the recipe manifest if the recipe really needs more\n",
            exitCode: 4)
    }

    func testTimeoutExitsWith4() throws {
        try cli.file("loop.lua", "recipe { name = \"loop\" }\nwhile true do end\n")
        let result = try cli.hubscript("run", "loop.lua", "--timeout", "1")
        assertResult(result, stdout: "", stderr: Self.timeoutMessage, exitCode: 4)
        XCTAssertLessThan(result.seconds, 4, "the deadline, not the watchdog, should stop this run")
    }

    func testManifestTimeoutAndCommandLineOverride() throws {
        try cli.file("slow.lua", """
        recipe { name = "slow", limits = { timeout = 30 } }
        while true do end
        """)
        let result = try cli.hubscript("slow.lua", "--timeout", "1")
        assertResult(result, stdout: "", stderr: Self.timeoutMessage, exitCode: 4)
        try cli.file("short.lua", """
        recipe { name = "short", limits = { timeout = 0.5 } }
        while true do end
        """)
        assertResult(try cli.hubscript("short.lua"), stdout: "",
                     stderr: "error: limit exceeded: timeout (0.5 s); raise it with --timeout or limits.timeout in the recipe manifest\n",
                     exitCode: 4)
    }

    func testLimitInJSONMode() throws {
        try cli.file("spin.lua", "recipe { name = \"spin\", limits = { instructions = 100000 } }\nwhile true do end\n")
        let result = try cli.hubscript("run", "spin.lua", "--json")
        XCTAssertEqual(result.status, 4)
        let lines = Array(JSONLines.withoutTimestamps(result.stdout).dropFirst())
        XCTAssertEqual(lines.first,
            #"{"kind":"limit.instructions","message":"limit exceeded: instructions (100000); raise limits.instructions in the recipe manifest if the work is expected","type":"error"}"#)
        XCTAssertEqual(lines.count, 2)
        XCTAssertTrue(lines.last?.contains(#""exit_code":4"#) ?? false, result.stdout)
    }

    private func luaString(_ s: String) -> String {
        "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}
