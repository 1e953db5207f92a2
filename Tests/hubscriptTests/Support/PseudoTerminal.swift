import Foundation
import XCTest

/// A pseudo-terminal for tests of what hubscript does when a person is at a terminal
/// (questions, colour, the progress line). The child's chosen standard streams are the
/// terminal; the others go to files. Output processing and echo are off, so the screen
/// is the exact bytes the child wrote (no `\n` → `\r\n`, no echo of typed answers).
final class PseudoTerminal {
    let master: Int32
    let slave: Int32

    /// What a child wrote and how it ended.
    struct Outcome {
        let status: Int32
        /// Everything the child wrote to the terminal, in order.
        let screen: String
        /// What went to stdout or stderr when that stream was not the terminal.
        let stdout: String
        let stderr: String
    }

    init() throws {
        #if os(Linux)
        // posix_openpt/unlockpt/ptsname are not visible to Swift here: their ioctls.
        let master = open("/dev/ptmx", O_RDWR | O_NOCTTY)
        var unlock: Int32 = 0
        var number: UInt32 = 0
        guard master >= 0, ioctl(master, 0x4004_5431 /* TIOCSPTLCK */, &unlock) == 0,
              ioctl(master, 0x8004_5430 /* TIOCGPTN */, &number) == 0 else {
            if master >= 0 { close(master) }
            throw XCTSkip("no pseudo-terminal here")
        }
        let slave = open("/dev/pts/\(number)", O_RDWR | O_NOCTTY)
        guard slave >= 0 else {
            close(master)
            throw XCTSkip("no pseudo-terminal here")
        }
        self.master = master
        self.slave = slave
        _ = fcntl(master, F_SETFL, fcntl(master, F_GETFL) | O_NONBLOCK)
        var settings = termios()
        tcgetattr(slave, &settings)
        settings.c_oflag &= ~tcflag_t(OPOST)
        settings.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(slave, TCSANOW, &settings)
        #else
        throw XCTSkip("the pseudo-terminal tests run on Linux")
        #endif
    }

    deinit {
        close(slave)
        close(master)
    }

    /// Runs `process` with stdin, stdout and stderr on the terminal where asked (else
    /// stdin from /dev/null, stdout and stderr to files). When the screen shows `prompt`,
    /// `answer` is typed. Kills the child after `timeout` seconds.
    func run(_ process: Process, stdin: Bool = true, stdout: Bool = true, stderr: Bool = true,
             answering prompt: String? = nil, with answer: String = "", timeout: Double = 60) throws -> Outcome {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-pty-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outFile = scratch.appendingPathComponent("stdout"), errFile = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outFile.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errFile.path, contents: nil)
        let terminal = FileHandle(fileDescriptor: slave, closeOnDealloc: false)
        process.standardInput = stdin ? terminal : FileHandle.nullDevice
        process.standardOutput = stdout ? terminal : try FileHandle(forWritingTo: outFile)
        process.standardError = stderr ? terminal : try FileHandle(forWritingTo: errFile)
        try process.run()
        var screen = [UInt8]()
        var answered = prompt == nil
        let deadline = Date().addingTimeInterval(timeout)
        var buffer = [UInt8](repeating: 0, count: 8192)
        while true {
            let n = read(master, &buffer, buffer.count)
            if n > 0 {
                screen += buffer[0..<n]
                if !answered, let prompt, String(decoding: screen, as: UTF8.self).contains(prompt) {
                    answered = true
                    _ = answer.withCString { write(master, $0, strlen($0)) }
                }
                continue
            }
            if !process.isRunning { break }
            if Date() > deadline {
                process.terminate()
                process.waitUntilExit()
                XCTFail("the child did not end within \(timeout) s; screen so far:\n\(String(decoding: screen, as: UTF8.self))")
                break
            }
            usleep(2_000)
        }
        process.waitUntilExit()
        while true {
            let n = read(master, &buffer, buffer.count)
            guard n > 0 else { break }
            screen += buffer[0..<n]
        }
        return Outcome(status: process.terminationStatus, screen: String(decoding: screen, as: UTF8.self),
                       stdout: (try? String(contentsOf: outFile, encoding: .utf8)) ?? "",
                       stderr: (try? String(contentsOf: errFile, encoding: .utf8)) ?? "")
    }
}

extension CLIHarness {
    /// `configured(args)` for a terminal: `TERM=xterm` and no `NO_COLOR` unless given in
    /// `environment` (which is merged last).
    func onTerminal(_ args: [String], state: URL? = nil, environment extra: [String: String] = [:]) -> Process {
        let process = configured(args, state: state)
        var environment = process.environment ?? [:]
        environment["NO_COLOR"] = nil
        environment["TERM"] = "xterm"
        process.environment = environment.merging(extra) { $1 }
        return process
    }
}

extension CLIHarness {
    /// Names the built-in sandbox in a configuration file (`HUBSCRIPT_CONFIG`), so runs
    /// print no "no configuration found" notice: stderr is the command's own.
    func useSandboxConfiguration() throws {
        extraEnvironment["HUBSCRIPT_CONFIG"] = try file("sandbox-config.lua", "return { profiles = { sandbox = { sandbox = true } } }\n")
    }
}
