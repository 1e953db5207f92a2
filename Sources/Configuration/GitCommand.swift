import Foundation
import SystemText
import HubClient

/// Runs the system's `git` (found on `PATH`) with an argument list — never through a
/// shell, so a repository URL's `;`, `$(…)` or spaces are only ever characters of one
/// argument. git's environment is built from an allow-list (`environment(from:hermetic:)`):
/// nothing of hubscript's own secrets (`HUBSCRIPT_VAULT_KEY`, `PGPASSWORD`, API keys)
/// reaches it or what it runs (ssh, credential helpers), with prompts off and messages
/// in English.
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
        process.environment = Self.environment(from: ProcessEnvironment.all, hermetic: hermetic)
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

extension GitCommand {
    /// The variables git may see from `parent`, by name: where programs and the home
    /// folder are, the locale, time zone and temporary folder, how to reach the network
    /// (proxies, CA bundles, the ssh agent, `GIT_SSH_COMMAND` for a deploy key), and
    /// where the user's git configuration is. Everything else — hubscript's vault keys
    /// and passphrase, `PGPASSWORD`, API keys and tokens of any tool, other `GIT_*`
    /// variables that could point git at another repository — is left out.
    static let inheritedNames: Set<String> = [
        "PATH", "HOME", "USER", "LOGNAME", "LANG", "LANGUAGE", "TZ", "TMPDIR",
        "XDG_CONFIG_HOME", "SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT",
        "HTTP_PROXY", "HTTPS_PROXY", "ALL_PROXY", "NO_PROXY", "http_proxy", "https_proxy", "all_proxy", "no_proxy",
        "SSL_CERT_FILE", "SSL_CERT_DIR", "GIT_SSL_CAINFO", "GIT_SSL_CAPATH", "CURL_CA_BUNDLE",
    ]

    /// Names that only matter to a git that reads the user's configuration and
    /// connects: a hermetic run (checks of a checkout) does neither.
    static let networkNames: Set<String> = [
        "XDG_CONFIG_HOME", "SSH_AUTH_SOCK", "GIT_SSH", "GIT_SSH_COMMAND", "GIT_SSH_VARIANT",
    ]

    /// git's environment: the allowed variables of `parent` (and `LC_*`, overridden by
    /// `LC_ALL=C`), prompts off (`GIT_TERMINAL_PROMPT=0`, `GIT_ASKPASS=/bin/false`), and
    /// for a `hermetic` run, no system or global configuration.
    static func environment(from parent: [String: String], hermetic: Bool) -> [String: String] {
        var environment = parent.filter { name, _ in
            (inheritedNames.contains(name) || name.hasPrefix("LC_")) && !(hermetic && networkNames.contains(name))
        }
        environment["GIT_TERMINAL_PROMPT"] = "0"
        environment["GIT_ASKPASS"] = "/bin/false"
        environment["LC_ALL"] = "C"
        if environment["PATH"] == nil { environment["PATH"] = "/usr/local/bin:/usr/bin:/bin" }
        if hermetic {
            environment["GIT_CONFIG_NOSYSTEM"] = "1"
            environment["GIT_CONFIG_GLOBAL"] = "/dev/null"
        }
        return environment
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
