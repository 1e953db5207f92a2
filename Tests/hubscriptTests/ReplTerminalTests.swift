import Foundation
import XCTest

/// `hubscript repl` on a terminal (a pseudo-terminal driven by python3's pty): line
/// editing, Tab completion (modules, and the session's variables and their fields), the
/// history (up arrow, and the file kept 0600), Ctrl-D.
final class ReplTerminalTests: XCTestCase {
    /// Types each step's keys once a fresh prompt is shown, then Ctrl-D; prints the screen.
    static let driver = #"""
    import os, pty, sys, time, select
    steps = [s.encode().decode("unicode_escape").encode("latin-1") for s in sys.argv[1].split("\x1f")]
    pid, fd = pty.fork()
    if pid == 0:
        os.execv(sys.argv[2], sys.argv[2:])
    screen = b""
    def wait_for(tokens, start):
        global screen
        deadline = time.time() + 60
        while not any(token in screen[start:] for token in tokens):
            if time.time() > deadline: return False
            ready, _, _ = select.select([fd], [], [], 1)
            if ready:
                try: data = os.read(fd, 4096)
                except OSError: return False
                if not data: return False
                screen += data
        return True
    # A fresh prompt (or a continuation prompt) follows a newline; a redraw of the line
    # being typed does not.
    mark, tokens = 0, [b"\r> "]
    for keys in steps + [b"\x04"]:
        if not wait_for(tokens, mark): break
        tokens = [b"\n\r> ", b"\n\r>> "]
        mark = len(screen)
        os.write(fd, keys)
    while True:
        ready, _, _ = select.select([fd], [], [], 30)
        if not ready: break
        try: data = os.read(fd, 4096)
        except OSError: break
        if not data: break
        screen += data
    _, status = os.waitpid(pid, 0)
    sys.stdout.write(screen.decode("utf-8", "replace"))
    sys.exit(os.waitstatus_to_exitcode(status))
    """#

    /// Runs `hubscript repl` on a pseudo-terminal, typing `steps`; the screen and the exit status.
    static func session(_ cli: CLIHarness, _ steps: [String]) throws -> (status: Int32, screen: String) {
        let script = try cli.file("pty-driver.py", Self.driver)
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
        p.arguments = [script, steps.joined(separator: "\u{1F}"), CLIHarness.binary.path, "repl", "--state-dir", cli.stateDir.path]
        p.currentDirectoryURL = cli.root
        var environment = cli.environment
        environment["TERM"] = "xterm"
        p.environment = environment
        let done = try CLIHarness.collect(p, timeout: 120)
        return (done.status, String(decoding: done.stdout, as: UTF8.self) + String(decoding: done.stderr, as: UTF8.self))
    }

    func testAHistoryFileThatIsASymlinkIsNeitherReadNorWritten() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3") }
        let cli = try CLIHarness(testCase: self)
        let target = try cli.file("elsewhere.txt", "not a history\n")
        let history = cli.stateDir.appendingPathComponent("repl/history")
        try FileManager.default.createDirectory(at: history.deletingLastPathComponent(), withIntermediateDirectories: true)
        try FileManager.default.createSymbolicLink(atPath: history.path, withDestinationPath: target)
        let (status, screen) = try Self.session(cli, [#"x = 41\r"#, #"x + 1\r"#])
        XCTAssertEqual(status, 0, screen)
        XCTAssertTrue(screen.contains("\r\n42\r\n"), screen)
        XCTAssertEqual(try String(contentsOfFile: target, encoding: .utf8), "not a history\n")
    }

    func testEditingCompletionAndHistoryOnATerminal() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3") }
        let cli = try CLIHarness(testCase: self)
        let history = cli.stateDir.appendingPathComponent("repl/history")
        try FileManager.default.createDirectory(at: history.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data("earlier = 1\n".utf8).write(to: history)
        try FileManager.default.setAttributes([.posixPermissions: 0o644], ofItemAtPath: history.path)
        let steps = [
            #"x = 20\r"#,
            #"json.enc\t({x + 1})\r"#,           // Tab completes json.encode
            #"\x1b[A\r"#,                          // up arrow: the line again
            #"y = 2\x7f3\r"#,                      // backspace
            #"oops\x03"#,                          // Ctrl-C drops the line
            #"y\r"#,
            #"for i = 1, 2 do\r"#,                 // an unfinished chunk: the continuation prompt
            #"print(i * 10) end\r"#,
            #"u = hub.users.get("ada@example.com")\r"#,
            #"u.ema\t\r"#,                       // Tab completes a field of a session variable
        ]
        let (status, screen) = try Self.session(cli, steps)
        XCTAssertEqual(status, 0, screen)
        XCTAssertTrue(screen.contains("hubscript repl: reads are live; writes are planned and shown, never sent. :help for help, Ctrl-D to end.\r\n"), screen)
        XCTAssertTrue(screen.contains("json.encode"), screen)
        XCTAssertTrue(screen.contains("^C"), screen)
        XCTAssertTrue(screen.contains("\r\n3\r\n"), screen)
        XCTAssertFalse(screen.contains("oops'"), screen)
        XCTAssertTrue(screen.contains("\r>> "), screen)
        XCTAssertTrue(screen.contains("\r\n10\r\n20\r\n"), screen)
        XCTAssertTrue(screen.contains("u.email\u{1B}[K"), screen)
        XCTAssertTrue(screen.contains("\r\n\"ada@example.com\"\r\n"), screen)
        let kept = try String(contentsOf: history, encoding: .utf8)
        XCTAssertEqual(kept, "earlier = 1\nx = 20\njson.encode({x + 1})\ny = 3\ny\nfor i = 1, 2 do\nprint(i * 10) end\n"
                       + "u = hub.users.get(\"ada@example.com\")\nu.email\n")
        let mode = try FileManager.default.attributesOfItem(atPath: history.path)[.posixPermissions] as? Int
        XCTAssertEqual(mode, 0o600)
    }
}
