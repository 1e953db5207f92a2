import Foundation
import XCTest

/// `vault set` on a terminal: the value is typed at a prompt with echo off, and the
/// terminal gets its echo back afterwards — also when Ctrl-C ends the prompt.
final class VaultPromptCLITests: XCTestCase {
    var cli: VaultCLI!
    var master: Int32 = -1
    var slave: Int32 = -1

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try VaultCLI(testCase: self)
        try cli.initialise()
        // posix_openpt/unlockpt/ptsname are not visible to Swift here: their ioctls.
        #if os(Linux)
        master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0,
              ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number) == 0 else {
            throw XCTSkip("no pseudo-terminal here")
        }
        slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        #else
        throw XCTSkip("the pseudo-terminal test runs on Linux")
        #endif
        XCTAssertGreaterThanOrEqual(slave, 0)
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
    }

    override func tearDown() {
        if slave >= 0 { close(slave) }
        if master >= 0 { close(master) }
        super.tearDown()
    }

    var echoes: Bool {
        var settings = termios()
        tcgetattr(slave, &settings)
        return settings.c_lflag & tcflag_t(ECHO) != 0
    }

    /// Waits until the child has turned echo off (it then shows the prompt).
    func waitForEchoOff(_ process: Process) throws {
        let deadline = Date().addingTimeInterval(10)
        while echoes {
            guard process.isRunning, Date() < deadline else {
                throw NSError(domain: "VaultPromptCLITests", code: 1,
                              userInfo: [NSLocalizedDescriptionKey: "the prompt never turned echo off (exited: \(!process.isRunning))"])
            }
            usleep(2_000)
        }
    }

    /// What the terminal showed (its echo), without waiting.
    func screen() -> String {
        var bytes = [UInt8](repeating: 0, count: 4096)
        let n = read(master, &bytes, bytes.count)
        return n > 0 ? String(decoding: bytes[0..<n], as: UTF8.self) : ""
    }

    func testTheValueIsTypedWithoutEchoAndTheTerminalEchoesAgainAfter() throws {
        XCTAssertTrue(echoes)
        let (process, finish) = try cli.start(["set", "db/password", "--key-file", cli.keyFile],
                                              input: FileHandle(fileDescriptor: slave, closeOnDealloc: false))
        try waitForEchoOff(process)
        XCTAssertEqual(write(master, "s3cret-typed\n", 13), 13)
        let outcome = try finish()
        XCTAssertEqual(outcome.status, 0, outcome.stderr)
        XCTAssertEqual(outcome.stdout, "Stored the secret 'db/password' (new).\n")
        XCTAssertEqual(outcome.stderr, "Value for db/password: \n")
        XCTAssertFalse(screen().contains("s3cret"), "the typed value was echoed")
        XCTAssertTrue(echoes, "echo is back on")
        XCTAssertEqual(try cli.value("db/password"), "s3cret-typed")
    }

    func testCtrlCAtThePromptRestoresEchoAndStoresNothing() throws {
        let (process, finish) = try cli.start(["set", "db/password", "--key-file", cli.keyFile],
                                              input: FileHandle(fileDescriptor: slave, closeOnDealloc: false))
        try waitForEchoOff(process)
        process.interrupt()
        let outcome = try finish()
        XCTAssertTrue(outcome.signalled)
        XCTAssertEqual(outcome.status, SIGINT)
        XCTAssertTrue(echoes, "echo is back on after SIGINT")
        XCTAssertEqual(try cli.open().list(), [])
    }
}
