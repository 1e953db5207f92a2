import Foundation
import HTTPKit
import HubSandbox
import XCTest

/// Runs the built `hubscript` binary in a private temporary folder (its own state
/// directory, no configuration file found by accident) and reads the sandbox it leaves.
final class CLIHarness {
    /// The repository root (this file is Tests/hubscriptTests/CLITestSupport.swift).
    static let repoRoot = URL(fileURLWithPath: #filePath).deletingLastPathComponent()
        .deletingLastPathComponent().deletingLastPathComponent()

    let binary: URL
    let root: URL
    let stateDir: URL
    /// Variables added to every child's environment (e.g. the vault key).
    var extraEnvironment: [String: String] = [:]

    /// How a child ended and what it wrote.
    struct Result {
        let status: Int32
        let stdout: String
        /// stderr as the process wrote it.
        let stderr: String
        /// Seconds from start to exit (0 when not measured).
        var seconds: Double = 0
        var output: String { stdout + stderr }
        /// stderr without the line that announces a run and the closing line of a run
        /// that made no Hub call (`RunStartLine`), for tests about the rest of it.
        var stderrWithoutRunStart: String { RunStartLine.removing(from: stderr) }
    }

    init(testCase: XCTestCase) throws {
        binary = Self.binary
        try Self.requireBinary()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-cli-tests-\(UUID().uuidString)")
        stateDir = root.appendingPathComponent("state")
        try FileManager.default.createDirectory(at: root.appendingPathComponent("config"), withIntermediateDirectories: true)
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    /// The environment of every child: no stray configuration file or state folder.
    var environment: [String: String] {
        var env = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HUBSCRIPT_") }
        env["XDG_CONFIG_HOME"] = root.appendingPathComponent("config").path
        env["XDG_STATE_HOME"] = root.appendingPathComponent("xdg-state").path
        env["HUBSCRIPT_VAULT_KEY"] = nil
        env["HUBSCRIPT_VAULT_KEY_FILE"] = nil
        env["HUBSCRIPT_VAULT_PASSPHRASE"] = nil
        env["HUBSCRIPT_VAULT_DIR"] = nil
        return env.merging(extraEnvironment) { $1 }
    }

    /// Writes `text` to `name` under the temporary folder; returns its absolute path.
    @discardableResult
    func file(_ name: String, _ text: String) throws -> String {
        let url = root.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url.path
    }

    /// A child process running `hubscript args… --state-dir STATE` in the temporary
    /// folder (`CLIHarness.process`), not started.
    func configured(_ args: [String], state: URL? = nil, cwd: URL? = nil) -> Process {
        Self.process(args + ["--state-dir", (state ?? stateDir).path], in: cwd ?? root, environment: environment)
    }

    /// `configured` with stdout and stderr on pipes the caller reads.
    func process(_ args: [String], state: URL? = nil, cwd: URL? = nil) -> (Process, Pipe, Pipe) {
        let p = configured(args, state: state, cwd: cwd)
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        return (p, out, err)
    }

    /// Starts `hubscript args… --state-dir STATE` with stdout read line by line as it
    /// comes (`LiveProcess`).
    func live(_ args: [String], state: URL? = nil) throws -> LiveProcess {
        try LiveProcess(process: configured(args, state: state))
    }

    /// Runs `args` (with `--json`) and returns its one JSON object (`runs show --json`).
    func json(_ args: [String], file: StaticString = #filePath, line: UInt = #line) throws -> [String: Any] {
        let r = try run(args, expect: 0, file: file, line: line)
        return try XCTUnwrap(try JSONSerialization.jsonObject(with: Data(r.stdout.utf8)) as? [String: Any], r.output,
                             file: file, line: line)
    }

    /// Starts `hubscript args…` with both pipes drained in the background (the child
    /// never blocks on a full pipe); `stop()` ends the draining. For kill tests.
    func startDrained(_ args: [String], state: URL? = nil) throws -> (process: Process, stop: () -> Void) {
        let (p, out, err) = process(args, state: state)
        out.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        err.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
        try p.run()
        return (p, {
            out.fileHandleForReading.readabilityHandler = nil
            err.fileHandleForReading.readabilityHandler = nil
        })
    }

    /// Starts every `processes` at once (output drained and dropped) and waits for all;
    /// their exit statuses, in order (two schedulers racing for the same fires).
    func runTogether(_ processes: [(Process, Pipe, Pipe)]) throws -> [Int32] {
        for (p, out, err) in processes {
            out.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
            err.fileHandleForReading.readabilityHandler = { _ = $0.availableData }
            try p.run()
        }
        return processes.map { p, out, err in
            p.waitUntilExit()
            out.fileHandleForReading.readabilityHandler = nil
            err.fileHandleForReading.readabilityHandler = nil
            return p.terminationStatus
        }
    }

    /// Runs `hubscript args… --state-dir STATE` to its end (with `input` on stdin, if given).
    @discardableResult
    func run(_ args: [String], state: URL? = nil, cwd: URL? = nil, input: String? = nil) throws -> Result {
        let p = configured(args, state: state, cwd: cwd)
        if let input {
            let file = root.appendingPathComponent("stdin-\(UUID().uuidString)")
            try Data(input.utf8).write(to: file)
            p.standardInput = try FileHandle(forReadingFrom: file)
        }
        return try Self.collect(p).result
    }

    /// Runs and fails the test unless the exit status is `expected`.
    @discardableResult
    func run(_ args: [String], state: URL? = nil, expect expected: Int32,
             file: StaticString = #filePath, line: UInt = #line) throws -> Result {
        let r = try run(args, state: state)
        XCTAssertEqual(r.status, expected, "hubscript \(args.joined(separator: " ")):\n\(r.output)", file: file, line: line)
        return r
    }

    /// Wipes and reseeds the state directory's sandbox Hub.
    func resetSandbox(users: Int? = nil, state: URL? = nil) throws {
        var args = ["sandbox", "reset"]
        if let users { args += ["--users", String(users)] }
        try run(args, state: state, expect: 0)
    }

    /// The journalled writes of run `id` by state (`done`, `pending`, `failed`): every
    /// write, not `runs show`'s first page.
    func writeStates(_ id: String) throws -> [String: Int] {
        let r = try run(["runs", "show", id, "--limit", "1000000"])
        guard r.status == 0 else { return [:] }
        var states: [String: Int] = [:]
        var inWrites = false
        for line in r.stdout.split(separator: "\n") {
            if line.hasPrefix("WRITES") { inWrites = true; continue }
            guard inWrites else { continue }
            let fields = line.split(separator: " ", omittingEmptySubsequences: true)
            if fields.first == "#" { continue }   // the column headings
            if fields.count >= 2 { states[String(fields[1]), default: 0] += 1 }
        }
        return states
    }

    /// Opens the state directory's sandbox file (after the CLI processes are done).
    func sandbox(state: URL? = nil) throws -> SandboxReader {
        let file = (state ?? stateDir).appendingPathComponent("sandbox/hub.sqlite")
        return SandboxReader(hub: try HubSandbox(options: SandboxOptions(storage: .file(file), rateLimits: .off)))
    }
}

/// `Data` handed from a reader thread.
final class LockedData: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ d: Data) { lock.withLock { data = d } }
    var isSet: Bool { lock.withLock { data != nil } }
    var value: Data { lock.withLock { data ?? Data() } }
}

/// Reads a sandbox Hub with the jobs key (every permission): in process from its file,
/// or over loopback HTTP from a served one.
struct SandboxReader {
    private let send: (HTTPRequestMessage) throws -> HTTPResponseMessage

    init(hub: HubSandbox) { send = { hub.handle($0) } }

    /// A sandbox served at `url` (`http://127.0.0.1:PORT`).
    init(served url: String) throws {
        guard let parsed = URL(string: url), let host = parsed.host, let port = parsed.port.flatMap(UInt16.init) else {
            throw NSError(domain: "SandboxReader", code: 0, userInfo: [NSLocalizedDescriptionKey: "not a loopback URL: \(url)"])
        }
        let client = LoopbackHTTPClient()
        send = { try client.perform($0, host: host, port: port, timeout: 10) }
    }

    /// `GET target` → the decoded JSON object; fails on a non-2xx answer.
    func get(_ target: String) throws -> [String: Any] {
        var headers = HTTPHeaders()
        headers.add("Substratal-Version", "1")
        headers.add("Authorization", "Bearer \(SandboxFixtures.jobsKeySecret)")
        let response = try send(HTTPRequestMessage(method: "GET", target: target, headers: headers))
        let text = String(decoding: response.body, as: UTF8.self)
        guard (200..<300).contains(response.status),
              let object = try JSONSerialization.jsonObject(with: response.body) as? [String: Any] else {
            throw NSError(domain: "SandboxReader", code: response.status, userInfo: [NSLocalizedDescriptionKey: "GET \(target): \(response.status) \(text)"])
        }
        return object
    }

    /// Every item of a list endpoint (follows cursors). `query` is already encoded.
    func all(_ path: String, _ query: String = "") throws -> [[String: Any]] {
        var items: [[String: Any]] = []
        var cursor: String?
        repeat {
            var target = path + "?limit=100" + (query.isEmpty ? "" : "&" + query)
            if let cursor {
                target += "&cursor=" + (cursor.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? cursor)
            }
            let page = try get(target)
            items += page["data"] as? [[String: Any]] ?? []
            let info = page["page"] as? [String: Any]
            cursor = (info?["has_more"] as? Bool) == true ? info?["next_cursor"] as? String : nil
        } while cursor != nil
        return items
    }
}

extension Dictionary where Key == String, Value == Any {
    func string(_ key: String) -> String? { self[key] as? String }
}
