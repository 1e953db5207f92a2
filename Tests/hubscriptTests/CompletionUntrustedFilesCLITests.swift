import Foundation
import XCTest

/// Completion runs at every Tab, in folders people cloned: a recipe, a pinned library
/// file, a lock or a journal that is a FIFO, a device or a link to one must give no
/// names at once (never wait, never fill the memory, never print on stderr), and a name
/// holding shell syntax must be inserted so that accepting it runs nothing.
final class CompletionUntrustedFilesCLITests: XCTestCase {
    private var cli: CLIHarness!
    private var environment: [String: String] = [:]
    /// A descriptor holding `held.fifo` open for writing: a reader of it waits for data
    /// that never comes (instead of seeing the end at once).
    private var heldWriter: Int32 = -1

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
        environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HUBSCRIPT_") }
        environment["HOME"] = cli.root.path
        environment["ZDOTDIR"] = cli.root.path
        environment["XDG_STATE_HOME"] = cli.root.appendingPathComponent("state").path
        environment["XDG_CONFIG_HOME"] = cli.root.appendingPathComponent("xdg").path
        environment["PATH"] = CLIHarness.binary.deletingLastPathComponent().path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        let fifo = cli.root.appendingPathComponent("held.fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        heldWriter = open(fifo, O_RDWR | O_CLOEXEC)   // O_RDWR: opens at once, and counts as a writer
        XCTAssertGreaterThanOrEqual(heldWriter, 0)
    }

    override func tearDown() {
        if heldWriter >= 0 { close(heldWriter) }
        cli = nil
        super.tearDown()
    }

    private func complete(_ words: String...) throws -> CLIHarness.Result {
        try CLIHarness.run(["__complete"] + words, in: cli.root, timeout: 10, environment: environment)
    }

    /// Library `ops` with recipes `a` and `b`, pinned by `hubscript trust`.
    private func trustedLibrary() throws {
        _ = try cli.file("ops/a.lua", "recipe { name = \"a\", params = { days = { type = \"integer\" } } }\n")
        _ = try cli.file("ops/b.lua", "recipe { name = \"b\" }\n")
        _ = try cli.file("hubscript.config.lua", "return { libraries = { ops = \"ops\" } }\n")
        let trust = try CLIHarness.run(["trust"], in: cli.root, environment: environment)
        XCTAssertEqual(trust.status, 0, trust.stderr)
    }

    private func link(_ name: String, to target: String) throws {
        let path = cli.root.appendingPathComponent(name).path
        try? FileManager.default.removeItem(atPath: path)
        try FileManager.default.createSymbolicLink(atPath: path, withDestinationPath: target)
    }

    func testCompleteReadsNoRecipeParametersFromAFifoOrADevice() throws {
        _ = try cli.file("x.lua", "recipe { name = \"x\", params = { n = { type = \"string\" } } }\n")
        assertResult(try complete("run", "x.lua", "--param", ""), stdout: ":none\nn=\n", stderr: "", exitCode: 0)
        assertResult(try complete("run", "held.fifo", "--param", ""), stdout: ":none\n", stderr: "", exitCode: 0)
        try link("linked.lua", to: "held.fifo")
        assertResult(try complete("run", "linked.lua", "--param", ""), stdout: ":none\n", stderr: "", exitCode: 0)
        assertResult(try complete("run", "/dev/zero", "--param", ""), stdout: ":none\n", stderr: "", exitCode: 0)
    }

    func testCompleteSkipsAPinnedLibraryFileThatIsAFifo() throws {
        try trustedLibrary()
        assertResult(try complete("ops:"), stdout: ":lua\nops:a\nops:b\n", stderr: "", exitCode: 0)
        try link("ops/b.lua", to: "../held.fifo")
        assertResult(try complete("ops:"), stdout: ":lua\nops:a\n", stderr: "", exitCode: 0)
        try link("ops/a.lua", to: "../held.fifo")
        assertResult(try complete("ops:a", "--param", ""), stdout: ":none\n", stderr: "", exitCode: 0)
    }

    func testCompleteIgnoresALockThatIsADeviceOrAFifo() throws {
        try trustedLibrary()
        for target in ["/dev/zero", "held.fifo"] {
            try link("hubscript.lock", to: target)
            assertResult(try complete("ops:"), stdout: ":lua\n", stderr: "", exitCode: 0)
        }
    }

    func testCompleteOffersNoRunIDsFromAJournalThatIsAFifo() throws {
        let folder = cli.root.appendingPathComponent("state/hubscript/journal")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        XCTAssertEqual(mkfifo(folder.appendingPathComponent("journal.sqlite").path, 0o600), 0)
        assertResult(try complete("runs", "show", ""), stdout: ":none\n", stderr: "", exitCode: 0)
    }

    /// At a real interactive bash prompt (driven through a pseudo-terminal by zsh's
    /// zpty): names holding `$(…)`, `;`, backquotes and blanks are inserted quoted, and accepting
    /// the line passes them to hubscript as one word each instead of running them.
    func testBashInsertsNamesQuotedSoThatAcceptingOneRunsNothing() throws {
        let zsh = "/usr/bin/zsh"
        guard FileManager.default.isExecutableFile(atPath: zsh), FileManager.default.isExecutableFile(atPath: "/bin/bash") else {
            throw XCTSkip("no zsh to drive bash")
        }
        _ = try cli.file("hubscript.config.lua", """
            return { profiles = { ["$(touch made-by-dollar)"] = { sandbox = true }, ["semi;touch made-by-semicolon"] = { sandbox = true },
                                  ["tick`touch made-by-backquote` now"] = { sandbox = true } } }

            """)
        _ = try cli.file("x.lua", "recipe { name = \"x\" }\n")
        let script = try CLIHarness.run(["completion", "bash"], in: cli.root, environment: environment)
        XCTAssertEqual(script.status, 0)
        _ = try cli.file("completion.bash", script.stdout)
        _ = try cli.file("drive.zsh", BashPromptDriver.script(completing: [
            "hubscript run x.lua --profile $",
            "hubscript run x.lua --profile se",
            "hubscript run x.lua --profile ti",
            "hubscript run x.lua --profile sa",
        ]))
        let p = Process()
        p.executableURL = URL(fileURLWithPath: zsh)
        p.arguments = ["-f", "drive.zsh"]
        p.currentDirectoryURL = cli.root
        p.environment = environment
        p.standardInput = FileHandle.nullDevice
        let done = try CLIHarness.collect(p, timeout: 30)
        XCTAssertEqual(String(decoding: done.stderr, as: UTF8.self), "")
        XCTAssertEqual(String(decoding: done.stdout, as: UTF8.self), #"""
            hubscript run x.lua --profile \$\(touch\ made-by-dollar\)\#(" ")
            hubscript run x.lua --profile semi\;touch\ made-by-semicolon\#(" ")
            hubscript run x.lua --profile tick\`touch\ made-by-backquote\`\ now\#(" ")
            hubscript run x.lua --profile sandbox\#(" ")

            """#)
        // Each name, as bash reads the line, is one argument that runs nothing.
        let echoed = try CLIHarness.collect({
            let e = Process()
            e.executableURL = URL(fileURLWithPath: "/bin/bash")
            e.arguments = ["-c", #"printf '<%s>\n' \$\(touch\ made-by-dollar\) semi\;touch\ made-by-semicolon"#]
            e.currentDirectoryURL = cli.root
            return e
        }(), timeout: 10)
        XCTAssertEqual(String(decoding: echoed.stdout, as: UTF8.self), "<$(touch made-by-dollar)>\n<semi;touch made-by-semicolon>\n")
        let made = try FileManager.default.contentsOfDirectory(atPath: cli.root.path).filter { $0.hasPrefix("made-by") }
        XCTAssertEqual(made, [])
    }
}
