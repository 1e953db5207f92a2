import Foundation
import TestSupport
import XCTest

/// `hubscript __complete` (what the completion scripts ask at each Tab) and the scripts
/// of `hubscript completion bash|zsh|fish`, each loaded by its shell. The folder holds a
/// configuration with profiles, jobs and a library pinned by `hubscript trust`, so the
/// names the binary offers are those of this folder, read at completion time.
final class CompletionCLITests: XCTestCase {
    private var cli: CLIHarness!
    private var environment: [String: String] = [:]

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
        environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HUBSCRIPT_") }
        environment["HOME"] = cli.root.path
        environment["ZDOTDIR"] = cli.root.path
        environment["XDG_STATE_HOME"] = cli.root.appendingPathComponent("state").path
        environment["XDG_CONFIG_HOME"] = cli.root.appendingPathComponent("xdg").path
        environment["XDG_DATA_HOME"] = cli.root.appendingPathComponent("xdg-data").path
        environment["PATH"] = CLIHarness.binary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// A configuration with two profiles, two jobs and library `ops` (two recipes, a
    /// module, a test), trusted.
    func writeConfiguration() throws {
        _ = try cli.file("ops/offboard.lua", """
            recipe { name = "offboard", needs = { "users.list" },
                     params = { email = { type = "string", required = true }, dry = { type = "boolean", default = false } } }
            print(params.email)

            """)
        _ = try cli.file("ops/users/suspend.lua", "recipe { name = \"suspend\", params = { days = { type = \"integer\", default = 90 } } }\n")
        _ = try cli.file("ops/helpers.lua", "local M = {}\nreturn M\n")
        _ = try cli.file("ops/offboard_test.lua", "test(\"x\", function() end)\n")
        _ = try cli.file("local.lua", "recipe { name = \"local\", params = { group = { type = \"string\" } } }\n")
        _ = try cli.file("hubscript.config.lua", """
            return {
              default_profile = "sandbox",
              profiles = { sandbox = { sandbox = true }, prod = { hub_url = "https://api.substratalapps.com", api_key_env = "PROD_KEY" } },
              libraries = { ops = "ops" },
              jobs = {
                ["nightly-sync"] = { recipe = "local.lua", schedule = "@daily" },
                weekly = { recipe = "ops:offboard", schedule = "@weekly", params = { email = "a@example.com" } },
              },
            }

            """)
        let trust = try hubscript("trust")
        XCTAssertEqual(trust.status, 0, trust.stderr)
    }

    func hubscript(_ args: String...) throws -> CLIHarness.Result {
        try CLIHarness.run(args, in: cli.root, environment: environment)
    }

    func complete(_ words: String...) throws -> CLIHarness.Result {
        try CLIHarness.run(["__complete"] + words, in: cli.root, environment: environment)
    }

    func testCompleteOffersTheNamesOfTheConfigurationTheLockAndTheManifest() throws {
        try writeConfiguration()
        assertResult(try complete("run", "x.lua", "--profile", ""), stdout: ":none\nprod\nsandbox\n", stderr: "", exitCode: 0)
        assertResult(try complete("jobs", "run", ""), stdout: ":none\nnightly-sync\nweekly\n", stderr: "", exitCode: 0)
        assertResult(try complete("jobs", "history", "n"), stdout: ":none\nnightly-sync\n", stderr: "", exitCode: 0)
        assertResult(try complete("ops:"), stdout: ":lua\nops:offboard\nops:users.suspend\n", stderr: "", exitCode: 0)
        assertResult(try complete("run", "o"), stdout: ":lua\nops:offboard\nops:users.suspend\n", stderr: "", exitCode: 0)
        assertResult(try complete("ops:offboard", "--param", ""), stdout: ":none\ndry=\nemail=\n", stderr: "", exitCode: 0)
        assertResult(try complete("plan", "ops:users.suspend", "--param", ""), stdout: ":none\ndays=\n", stderr: "", exitCode: 0)
        assertResult(try complete("run", "ops:offboard", "--param", "dry="), stdout: ":none\ndry=true\ndry=false\n", stderr: "", exitCode: 0)
        assertResult(try complete("local.lua", "--param", ""), stdout: ":none\ngroup=\n", stderr: "", exitCode: 0)
        assertResult(try complete("trust", ""), stdout: ":all\nops\n", stderr: "", exitCode: 0)
        assertResult(try complete("completion", ""), stdout: ":none\nbash\nzsh\nfish\n", stderr: "", exitCode: 0)
        assertResult(try complete("sandbox", "serve", "--rate-limits", ""), stdout: ":none\nstandard\noff\n", stderr: "", exitCode: 0)
        assertResult(try complete("runs", "re"), stdout: ":none\nresume\nrepair\n", stderr: "", exitCode: 0)
        assertResult(try complete("runs", "resume", "x", "--q"), stdout: ":none\n--quiet\n", stderr: "", exitCode: 0)
        assertResult(try complete("run", "x.lua", "--config", ""), stdout: ":lua\n", stderr: "", exitCode: 0)
        assertResult(try complete("apply", ""), stdout: ":all\n", stderr: "", exitCode: 0)
        assertResult(try complete("__complete", ""), stdout: ":none\n", stderr: "", exitCode: 0)
    }

    func testCompleteOffersRunIDsMostRecentFirst() throws {
        try writeConfiguration()
        XCTAssertEqual(try complete("runs", "show", "").stdout, ":none\n", "no journal yet: no ids, and none made")
        XCTAssertFalse(FileManager.default.fileExists(atPath: cli.root.appendingPathComponent("state/hubscript/journal").path))
        for _ in 0..<3 { XCTAssertEqual(try hubscript("local.lua").status, 0) }
        let listed = try hubscript("runs", "list").stdout.split(separator: "\n").dropFirst().map { String($0.prefix { $0 != " " }) }
        XCTAssertEqual(listed.count, 3)
        assertResult(try complete("runs", "show", ""), stdout: ":none\n" + listed.map { $0 + "\n" }.joined(), stderr: "", exitCode: 0)
        assertResult(try complete("runs", "resume", listed[1]), stdout: ":none\n\(listed[1])\n", stderr: "", exitCode: 0)
        assertResult(try complete("runs", "show", "--state-dir", "elsewhere", ""), stdout: ":none\n", stderr: "", exitCode: 0)
    }

    /// On a PostgreSQL journal (the configuration's `journal`), the ids come from there.
    func testCompleteOffersTheRunIDsOfAPostgreSQLJournal() throws {
        let url = try TestPostgres.freshSchemaURL()
        _ = try cli.file("local.lua", "recipe { name = \"local\" }\n")
        _ = try cli.file("hubscript.config.lua", """
            return { default_profile = "sandbox", profiles = { sandbox = { sandbox = true } }, journal = "\(url)" }

            """)
        XCTAssertEqual(try complete("runs", "show", "").stdout, ":none\n", "an empty schema: no ids, and no tables made")
        for _ in 0..<2 { XCTAssertEqual(try hubscript("local.lua").status, 0) }
        let listed = try hubscript("runs", "list").stdout.split(separator: "\n").dropFirst().map { String($0.prefix { $0 != " " }) }
        XCTAssertEqual(listed.count, 2)
        assertResult(try complete("runs", "show", ""), stdout: ":none\n" + listed.map { $0 + "\n" }.joined(), stderr: "", exitCode: 0)
        XCTAssertFalse(FileManager.default.fileExists(atPath: cli.root.appendingPathComponent("state/hubscript/journal").path))
    }

    /// Completion reads; it never makes the state folder, a journal or a lock, and a
    /// configuration it cannot use (broken, writable by others) gives no names, quietly.
    func testCompleteWritesNothingAndNeverFailsLoudly() throws {
        try writeConfiguration()
        try? FileManager.default.removeItem(at: cli.root.appendingPathComponent("state"))
        let before = try folderListing()
        for words in [["runs", "show", ""], ["run", "x", "--profile", ""], ["ops:offboard", "--param", ""], ["ops:"],
                      ["jobs", "run", ""], ["run", "--config", "nope.lua", "x", "--profile", ""], [], ["--"], ["\u{1}", ""]] {
            let result = try CLIHarness.run(["__complete"] + words, in: cli.root, environment: environment)
            XCTAssertEqual(result.status, 0, "\(words)")
            XCTAssertEqual(result.stderr, "", "\(words)")
        }
        XCTAssertEqual(try folderListing(), before, "completion wrote something")

        _ = try cli.file("hubscript.config.lua", "return { profiles = \n")
        assertResult(try complete("run", "x", "--profile", ""), stdout: ":none\nsandbox\n", stderr: "", exitCode: 0)
        assertResult(try complete("runs", "show", ""), stdout: ":none\n", stderr: "", exitCode: 0)
        assertResult(try complete("jobs", "run", ""), stdout: ":none\n", stderr: "", exitCode: 0)
        try writeConfiguration()
        XCTAssertEqual(chmod(cli.root.appendingPathComponent("hubscript.config.lua").path, 0o666), 0)
        assertResult(try complete("run", "x", "--profile", ""), stdout: ":none\nsandbox\n", stderr: "", exitCode: 0)
    }

    private func folderListing() throws -> [String] {
        let enumerator = FileManager.default.enumerator(atPath: cli.root.path)
        return (enumerator?.allObjects as? [String] ?? []).sorted()
    }

    // MARK: The shells

    /// Runs `shell args…` in the test's folder with the test's environment.
    func shell(_ shell: String, _ args: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
        guard FileManager.default.isExecutableFile(atPath: shell) else { throw XCTSkip("no \(shell)") }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: shell)
        p.arguments = args
        p.currentDirectoryURL = cli.root
        p.environment = environment
        p.standardInput = FileHandle.nullDevice
        let done = try CLIHarness.collect(p, timeout: 30)
        return (done.status, String(decoding: done.stdout, as: UTF8.self), String(decoding: done.stderr, as: UTF8.self))
    }

    /// Saves `hubscript completion SHELL` as `completion.SHELL`.
    func saveScript(_ name: String) throws {
        let script = try hubscript("completion", name)
        XCTAssertEqual(script.status, 0)
        XCTAssertEqual(script.stderr, "")
        _ = try cli.file("completion.\(name)", script.stdout)
    }

    /// What bash's `_hubscript` offers when the line up to the cursor is `line`;
    /// `words` is the line as bash splits it into COMP_WORDS (at blanks, `:` and `=`).
    func bash(_ line: String, _ words: [String]) throws -> String {
        let quoted = words.map { "'\($0)'" }.joined(separator: " ")
        let result = try shell("/bin/bash", ["-c", """
            source completion.bash
            COMP_LINE='\(line)'; COMP_POINT=${#COMP_LINE}; COMP_WORDS=(\(quoted)); COMP_CWORD=\(words.count - 1)
            _hubscript; printf '%s\\n' "${COMPREPLY[@]}"
            """])
        XCTAssertEqual(result.stderr, "")
        return result.stdout
    }

    func testBashScriptIsValidRegistersAndCompletesThroughTheBinary() throws {
        try writeConfiguration()
        try saveScript("bash")
        let syntax = try shell("/bin/bash", ["-n", "completion.bash"])
        XCTAssertEqual(syntax.status, 0, syntax.stderr)
        let registered = try shell("/bin/bash", ["-c", "source completion.bash && complete -p hubscript"])
        XCTAssertEqual(registered.stdout, "complete -o filenames -F _hubscript hubscript\n")
        XCTAssertEqual(registered.stderr, "")

        XCTAssertEqual(try bash("hubscript ru", ["hubscript", "ru"]), "run\nruns\n")
        XCTAssertEqual(try bash("hubscript loc", ["hubscript", "loc"]), "local.lua\n")
        XCTAssertEqual(try bash("hubscript ops:", ["hubscript", "ops", ":", ""]), "offboard\nusers.suspend\n",
                       "bash replaces only what follows the colon")
        XCTAssertEqual(try bash("hubscript ops:offboard --param ", ["hubscript", "ops", ":", "offboard", "--param", ""]), "dry=\nemail=\n")
        XCTAssertEqual(try bash("hubscript ops:offboard --param dry=", ["hubscript", "ops", ":", "offboard", "--param", "dry", "=", ""]),
                       "true\nfalse\n")
        XCTAssertEqual(try bash("hubscript run x.lua --profile p", ["hubscript", "run", "x.lua", "--profile", "p"]), "prod\n")
        XCTAssertEqual(try bash("hubscript jobs run ", ["hubscript", "jobs", "run", ""]), "nightly-sync\nweekly\n")
        XCTAssertEqual(try bash("hubscript completion ", ["hubscript", "completion", ""]), "bash\nzsh\nfish\n")
        XCTAssertEqual(try bash("hubscript run x.lua --state-dir o", ["hubscript", "run", "x.lua", "--state-dir", "o"]), "ops\n")
    }

    func testZshScriptLoadsIntoCompsysAndCompletesThroughTheBinary() throws {
        let zsh = "/usr/bin/zsh"
        try writeConfiguration()
        try saveScript("zsh")
        let syntax = try shell(zsh, ["-n", "completion.zsh"])
        XCTAssertEqual(syntax.status, 0, syntax.stderr)
        XCTAssertEqual(syntax.stderr, "")
        // Loaded after compinit, as ~/.zshrc would; outside a completion widget
        // compadd and _files cannot run, so they are replaced by functions that print
        // what they were given.
        let sourced = try shell(zsh, ["-f", "-c", """
            autoload -U compinit && compinit -u
            source ./completion.zsh
            print -r -- "registered: $_comps[hubscript]"
            compadd() { print -r -- "compadd $*" }
            _files() { print -r -- "_files $*" }
            __hubscript_complete hubscript ru
            __hubscript_complete hubscript ops:o
            __hubscript_complete hubscript ops:offboard --param ''
            __hubscript_complete hubscript runs show ''
            __hubscript_complete hubscript run x.lua --state-dir ''
            """])
        XCTAssertEqual(sourced.stderr, "")
        XCTAssertEqual(sourced.stdout, """
            registered: _hubscript
            compadd -- run runs
            _files -g *.lua
            compadd -- ops:offboard
            _files -g *.lua
            compadd -S  -- dry= email=
            _files -/

            """)
        XCTAssertEqual(sourced.status, 0)
    }

    /// At a real interactive prompt (zsh driven through a pseudo-terminal by zpty): the
    /// line after Tab, read by a widget bound to Ctrl-X. Keys wait while a completion
    /// runs, so nothing here depends on timing.
    func testZshCompletesAtAnInteractivePrompt() throws {
        let zsh = "/usr/bin/zsh"
        try writeConfiguration()
        try saveScript("zsh")
        XCTAssertEqual(try hubscript("local.lua").status, 0)
        let run = try hubscript("runs", "list").stdout.split(separator: "\n").dropFirst().map { String($0.prefix { $0 != " " }) }
        XCTAssertEqual(run.count, 1)
        _ = try cli.file("drive.zsh", #"""
            zmodload zsh/zpty
            zpty z zsh -f -i
            zpty -w z 'autoload -U compinit && compinit -u; source ./completion.zsh; unsetopt beep'
            zpty -w z 'show() { zle -M "BUF<$BUFFER>"; BUFFER= }; zle -N show; bindkey "^X" show'
            zpty -w z 'print -r -- READY'
            zpty -r z line '*READY*'
            complete_line() {
              zpty -n -w z "$1"$'\t'$'\C-x'
              zpty -r z out '*BUF<*>*'
              print -r -- "${${out##*BUF<}%%>*}"
            }
            complete_line 'hubscript jobs run n'
            complete_line 'hubscript ops:users.s'
            complete_line 'hubscript ops:offboard --param em'
            complete_line 'hubscript ops:offboard --param dry=t'
            complete_line 'hubscript runs show run_'
            complete_line 'hubscript completion f'
            complete_line 'hubscript loc'
            zpty -d z

            """#)
        let driven = try shell(zsh, ["-f", "drive.zsh"])
        XCTAssertEqual(driven.stderr, "")
        XCTAssertEqual(driven.stdout, """
            hubscript jobs run nightly-sync\u{20}
            hubscript ops:users.suspend\u{20}
            hubscript ops:offboard --param email=
            hubscript ops:offboard --param dry=true\u{20}
            hubscript runs show \(run[0])\u{20}
            hubscript completion fish\u{20}
            hubscript local.lua\u{20}

            """)
    }

    /// At a real interactive bash prompt (driven through a pseudo-terminal by zsh's
    /// zpty): the line after Tab, printed by a command bound to Ctrl-X.
    func testBashCompletesAtAnInteractivePrompt() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/zsh") else { throw XCTSkip("no zsh to drive bash") }
        try writeConfiguration()
        try saveScript("bash")
        _ = try cli.file("drive.zsh", BashPromptDriver.script(completing: [
            "hubscript jobs run n",
            "hubscript ops:users.s",
            "hubscript ops:offboard --param em",
            "hubscript ops:offboard --param dry=t",
            "hubscript completion f",
            "hubscript loc",
            "hubscript run local.lua --config hubscript.c",
        ]))
        let driven = try shell("/usr/bin/zsh", ["-f", "drive.zsh"])
        XCTAssertEqual(driven.stderr, "")
        XCTAssertEqual(driven.stdout, """
            hubscript jobs run nightly-sync\u{20}
            hubscript ops:users.suspend\u{20}
            hubscript ops:offboard --param email=
            hubscript ops:offboard --param dry=true\u{20}
            hubscript completion fish\u{20}
            hubscript local.lua\u{20}
            hubscript run local.lua --config hubscript.config.lua\u{20}

            """)
    }

    func testFishScriptIsValidAndCompletesThroughTheBinary() throws {
        let fish = "/usr/bin/fish"
        try writeConfiguration()
        try saveScript("fish")
        let syntax = try shell(fish, ["--no-execute", "completion.fish"])
        XCTAssertEqual(syntax.status, 0, syntax.stderr)
        XCTAssertEqual(syntax.stderr, "")
        let completed = try shell(fish, ["--no-config", "-c", """
            source completion.fish
            complete -C'hubscript ru'
            complete -C'hubscript ops:'
            complete -C'hubscript ops:offboard --param '
            complete -C'hubscript jobs run '
            complete -C'hubscript loc'
            """])
        XCTAssertEqual(completed.stderr, "")
        XCTAssertEqual(completed.stdout, """
            run
            runs
            ops:offboard
            ops:users.suspend
            dry=
            email=
            nightly-sync
            weekly
            local.lua

            """)
    }

    func testTheCompletionCommandNamesTheShells() throws {
        assertResult(try hubscript("completion", "tcsh"), stdout: "", stderr: """
        hubscript completion: unknown shell 'tcsh' (bash, zsh or fish)
        Run 'hubscript completion --help' for usage.

        """, exitCode: 2)
        assertResult(try hubscript("completion"), stdout: "", stderr: """
        hubscript completion: expected the shell: bash, zsh or fish
        Run 'hubscript completion --help' for usage.

        """, exitCode: 2)
    }
}
