import Foundation
import SystemText
import HubClient

/// Runs the system's `git` (found on `PATH`) with an argument list — never through a
/// shell, so a repository URL's `;`, `$(…)` or spaces are only ever characters of one
/// argument. The environment is the caller's without any `GIT_*` variable (which could
/// point git at another repository or configuration), with prompts off and messages in
/// English.
struct GitCommand {
    let executable: URL

    struct Result {
        let status: Int32
        let stdout: String
        let stderr: String
        /// git's last `fatal:`/`error:` line (else its last line), for messages.
        var reason: String {
            let lines = stderr.split(separator: "\n").map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            return lines.last { $0.hasPrefix("fatal:") || $0.hasPrefix("error:") } ?? lines.last ?? "exit status \(status)"
        }
    }

    /// The `git` on `PATH`; an error that says how to install it when there is none.
    static func find(environment: [String: String] = ProcessEnvironment.all, forLibrary name: String) throws -> GitCommand {
        let path = environment["PATH"] ?? "/usr/local/bin:/usr/bin:/bin"
        for folder in path.split(separator: ":") where !folder.isEmpty {
            let candidate = URL(fileURLWithPath: String(folder)).appendingPathComponent("git")
            if FileManager.default.isExecutableFile(atPath: candidate.path) { return GitCommand(executable: candidate) }
        }
        throw HubConfigError("library \(name) is a git repository, and git is not installed (no git on PATH); install it (apt-get install git) and run the command again")
    }

    /// Runs `git args…` in `folder` (nil: the current folder) to its end, or until
    /// `timeout` seconds passed (then it is terminated and the result says so).
    /// `hermetic`: without the user's and the system's git configuration (checks of a
    /// checkout need no credentials, and a filter driver defined there — git-lfs, or
    /// anything else — would run on the checkout's files).
    func run(_ args: [String], in folder: URL? = nil, timeout: TimeInterval = 600, hermetic: Bool = false) throws -> Result {
        let process = Process()
        process.executableURL = executable
        // Nothing from a checkout's own .git/config may run a command: no hooks, no
        // fsmonitor, no ext:: transport.
        process.arguments = ["-c", "protocol.ext.allow=never", "-c", "core.hooksPath=/dev/null", "-c", "core.fsmonitor=false",
                             "-c", "advice.detachedHead=false"] + args
        if let folder { process.currentDirectoryURL = folder }
        var environment = ProcessEnvironment.all.filter { !$0.key.hasPrefix("GIT_") }
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["GIT_ASKPASS"] = "/bin/false"
        environment["LC_ALL"] = "C"
        if hermetic {
            environment["GIT_CONFIG_NOSYSTEM"] = "1"
            environment["GIT_CONFIG_GLOBAL"] = "/dev/null"
        }
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let errData = Collected()
        let reader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        do { try process.run() } catch {
            throw HubConfigError("cannot run \(executable.path): \(error.localizedDescription)")
        }
        reader.start()
        let timer = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: timer)
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        timer.cancel()
        let stderr = errData.wait()
        return Result(status: process.terminationStatus, stdout: String(decoding: outData, as: UTF8.self),
                      stderr: String(decoding: stderr, as: UTF8.self)
                          + (process.terminationReason == .uncaughtSignal ? "\nfatal: git stopped after \(Int(timeout)) s" : ""))
    }
}

/// Bytes one thread reads and another waits for.
private final class Collected: @unchecked Sendable {
    private let condition = NSCondition()
    private var data: Data?

    func set(_ value: Data) {
        condition.lock()
        data = value
        condition.broadcast()
        condition.unlock()
    }

    func wait() -> Data {
        condition.lock()
        defer { condition.unlock() }
        while data == nil { condition.wait() }
        return data!
    }
}
