import Foundation
import XCTest

/// `hubscript repl` on a pseudo-terminal with hostile surroundings: completion
/// candidates that are keys of Hub data and lines recalled from the history file are
/// drawn escaped; a history file that is a FIFO is left alone; a signal from outside at
/// the prompt leaves the terminal as it found it.
final class ReplTerminalSafetyTests: XCTestCase {
    /// Runs `hubscript repl` on a pseudo-terminal, typing `steps` (`ReplTerminalTests.session`).
    func session(_ cli: CLIHarness, _ steps: [String]) throws -> (status: Int32, screen: String) {
        try ReplTerminalTests.session(cli, steps)
    }

    func historyFile(_ cli: CLIHarness) throws -> URL {
        let history = cli.stateDir.appendingPathComponent("repl/history")
        try FileManager.default.createDirectory(at: history.deletingLastPathComponent(), withIntermediateDirectories: true)
        return history
    }

    func testCompletionCandidatesAndRecalledLinesCannotMoveTheTerminal() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3") }
        let cli = try CLIHarness(testCase: self)
        try Data("x = 1 -- \u{1B}[2J\u{202E}\n".utf8).write(to: try historyFile(cli))
        let steps = [
            #"t = { ["k\\27[2J"] = 1, ["k\\u{9B}1m"] = 2, ["k" .. string.rep("x", 100)] = 3 }\r"#,
            #"t.k\t\x15\x1b[A\x1b[A\x151\r"#,   // Tab lists t's keys; up twice recalls the file's line
        ]
        let (status, screen) = try session(cli, steps)
        XCTAssertEqual(status, 0, screen)
        XCTAssertTrue(screen.contains("\nk\\e[2J  k\\u{009B}1m\r"), "a name over 100 bytes is not offered: \(screen)")
        XCTAssertTrue(screen.contains("\r> x = 1 -- \\e[2J\\u{202E}\u{1B}[K"), screen)
        XCTAssertFalse(screen.contains("\u{1B}[2J"), screen)
        XCTAssertFalse(screen.contains("\u{9B}"), screen)
        XCTAssertFalse(screen.contains("\u{202E}"), screen)
        XCTAssertTrue(screen.contains("\r\n1\r\n"), screen)
    }

    func testBytesThatAreNotUTF8AreRefusedWithABellAndTheSessionGoesOn() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3") }
        let cli = try CLIHarness(testCase: self)
        let (status, screen) = try session(cli, [#"\xf0ABC\xe2\x28x\xff\x151\r"#, #"2\r"#])
        XCTAssertEqual(status, 0, screen)
        XCTAssertTrue(screen.contains("\u{7}"), screen)
        XCTAssertTrue(screen.contains("\r\n1\r\n"), screen)
        XCTAssertTrue(screen.contains("\r\n2\r\n"), screen)
    }

    func testAHistoryFileThatIsAFIFOIsNeitherReadNorWritten() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3") }
        let cli = try CLIHarness(testCase: self)
        let history = try historyFile(cli)
        XCTAssertEqual(mkfifo(history.path, 0o600), 0)
        let (status, screen) = try session(cli, [#"x = 41\r"#, #"x + 1\r"#])
        XCTAssertEqual(status, 0, screen)
        XCTAssertTrue(screen.contains("\r\n42\r\n"), screen)
        var info = stat()
        XCTAssertEqual(lstat(history.path, &info), 0)
        XCTAssertEqual(info.st_mode & S_IFMT, S_IFIFO, "the FIFO is left as it was")
    }

    func testAHistoryFileOfAnotherUserIsNeitherReadNorWritten() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3") }
        guard geteuid() == 0 else { throw XCTSkip("giving a file to another user needs root") }
        let cli = try CLIHarness(testCase: self)
        let history = try historyFile(cli)
        try Data("planted = 1\n".utf8).write(to: history)
        XCTAssertEqual(chown(history.path, 65534, 65534), 0)
        let (status, screen) = try session(cli, [#"\x1b[A\x15x = 41\r"#, #"x + 1\r"#])
        XCTAssertEqual(status, 0, screen)
        XCTAssertTrue(screen.contains("\r\n42\r\n"), screen)
        XCTAssertFalse(screen.contains("planted"), "another user's file is not recalled: \(screen)")
        XCTAssertEqual(try String(contentsOf: history, encoding: .utf8), "planted = 1\n", "nor written")
    }

    /// Starts `hubscript repl` on a pseudo-terminal, waits for its prompt, sends `signal`,
    /// and reports the terminal's mode at the prompt and after the process died.
    static let signalDriver = #"""
    import os, pty, sys, time, select, termios, signal, fcntl
    master, slave = pty.openpty()
    pid = os.fork()
    if pid == 0:
        os.setsid()
        for fd in (0, 1, 2): os.dup2(slave, fd)
        fcntl.ioctl(0, termios.TIOCSCTTY, 0)
        os.execv(sys.argv[2], sys.argv[2:])
    screen, deadline = b"", time.time() + 60
    while b"\r> " not in screen and time.time() < deadline:
        ready, _, _ = select.select([master], [], [], 1)
        if ready: screen += os.read(master, 4096)
    raw = not (termios.tcgetattr(slave)[3] & termios.ECHO)
    os.kill(pid, int(sys.argv[1]))
    _, status = os.waitpid(pid, 0)
    lflag = termios.tcgetattr(slave)[3]
    print("raw at the prompt: %s; after: echo %s, canonical %s; died of signal %s" % (
        raw, bool(lflag & termios.ECHO), bool(lflag & termios.ICANON), os.WTERMSIG(status) if os.WIFSIGNALED(status) else None))
    """#

    func testASignalAtThePromptLeavesTheTerminalAsItWas() throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/python3") else { throw XCTSkip("no python3") }
        let cli = try CLIHarness(testCase: self)
        let script = try cli.file("pty-signal.py", Self.signalDriver)
        for signal in [SIGTERM, SIGHUP, SIGINT] {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/usr/bin/python3")
            p.arguments = [script, String(signal), CLIHarness.binary.path, "repl", "--state-dir", cli.stateDir.path]
            p.currentDirectoryURL = cli.root
            var environment = cli.environment
            environment["TERM"] = "xterm"
            p.environment = environment
            let done = try CLIHarness.collect(p, timeout: 120)
            XCTAssertEqual(done.status, 0, String(decoding: done.stderr, as: UTF8.self))
            XCTAssertEqual(String(decoding: done.stdout, as: UTF8.self),
                           "raw at the prompt: True; after: echo True, canonical True; died of signal \(signal)\n")
        }
    }
}
