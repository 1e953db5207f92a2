import Foundation
import XCTest

// MARK: The one way tests start the binary
//
// Every child a test starts — a harness run to its end, a live child read while it
// runs, a run on a pseudo-terminal — is configured by `CLIHarness.process` and, when it
// runs to its end, collected by `CLIHarness.collect`.
extension CLIHarness {
    /// The folder holding the test bundle and the products SwiftPM built with it.
    static var productsDirectory: URL {
        let candidates = [
            Bundle(for: BundleMarker.self).bundleURL.deletingLastPathComponent(),
            Bundle(for: BundleMarker.self).bundleURL,
            Bundle.main.bundleURL,
            Bundle.main.bundleURL.deletingLastPathComponent(),
        ]
        for folder in candidates where FileManager.default.isExecutableFile(atPath: folder.appendingPathComponent("hubscript").path) {
            return folder
        }
        return candidates[0]
    }

    /// The binary under test: `HUBSCRIPT_TEST_BINARY` when set (CI sets it to the release
    /// build, the binary users run), else the `hubscript` SwiftPM built beside the tests.
    static var binary: URL { binary(environment: ProcessInfo.processInfo.environment) }

    /// `binary` as `environment` chooses it.
    static func binary(environment: [String: String]) -> URL {
        if let path = environment["HUBSCRIPT_TEST_BINARY"], !path.isEmpty {
            return URL(fileURLWithPath: path)
        }
        return debugBinary
    }

    /// The `hubscript` SwiftPM built beside the tests (a debug build under `swift test`),
    /// whatever `HUBSCRIPT_TEST_BINARY` says: the tests of a debug build's test seams
    /// (the vault's kill points) spawn it, since the release binary has none.
    static var debugBinary: URL { productsDirectory.appendingPathComponent("hubscript") }

    /// Skips the calling test when `binary` is not built, so `swift test --filter` on a
    /// library module works before `swift build`; under CI (`CI` set) a missing binary
    /// fails instead, since a suite that skips every CLI test proves nothing.
    static func requireBinary(at binary: URL = binary,
                              environment: [String: String] = ProcessInfo.processInfo.environment) throws {
        guard !FileManager.default.isExecutableFile(atPath: binary.path) else { return }
        let message = "the hubscript binary is not built at \(binary.path) (run 'swift build' first)"
        if environment["CI"] != nil { throw MissingBinary(description: message) }
        throw XCTSkip(message)
    }

    /// The binary under test is missing where CI runs the suite.
    struct MissingBinary: Error, CustomStringConvertible { let description: String }

    /// A configured child (not started): `hubscript args…` in `directory` with exactly
    /// `environment`, stdin from /dev/null.
    static func process(_ args: [String], in directory: URL, environment: [String: String]) -> Process {
        let process = Process()
        process.executableURL = binary
        process.arguments = args
        process.currentDirectoryURL = directory
        process.environment = environment
        process.standardInput = FileHandle.nullDevice
        return process
    }

    /// What a child wrote and how it ended.
    struct Collected {
        let stdout: Data
        let stderr: Data
        let status: Int32
        let seconds: Double

        /// The same, as text.
        var result: Result {
            Result(status: status, stdout: String(decoding: stdout, as: UTF8.self),
                   stderr: String(decoding: stderr, as: UTF8.self), seconds: seconds)
        }
    }

    /// Starts `process` with stdout and stderr on pipes drained while it runs (so it
    /// never blocks on a full pipe), terminates it after `timeout` seconds (nil: never),
    /// and waits for its end.
    static func collect(_ process: Process, timeout: Double? = nil) throws -> Collected {
        let out = Pipe(), err = Pipe()
        process.standardOutput = out
        process.standardError = err
        let start = Date()
        try process.run()
        let errData = LockedData()
        let reader = Thread { errData.set(err.fileHandleForReading.readDataToEndOfFile()) }
        reader.start()
        let killer = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
        if let timeout { DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer) }
        let outData = out.fileHandleForReading.readDataToEndOfFile()
        process.waitUntilExit()
        killer.cancel()
        while !errData.isSet { usleep(1_000) }
        return Collected(stdout: outData, stderr: errData.value, status: process.terminationStatus,
                         seconds: Date().timeIntervalSince(start))
    }

    /// The environment of a child isolated from the machine's state and configuration:
    /// XDG folders under `scratch` and, with `sandboxConfig`, a configuration file there
    /// naming the built-in sandbox (so no "no configuration" notice). No HUBSCRIPT_*
    /// variable of the caller's gets through; `extra` goes on top.
    static func isolatedEnvironment(scratch: URL, sandboxConfig: Bool = true,
                                    extra: [String: String] = [:]) throws -> [String: String] {
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HUBSCRIPT_") }
        environment["XDG_STATE_HOME"] = scratch.appendingPathComponent("state").path
        environment["XDG_CONFIG_HOME"] = scratch.appendingPathComponent("config").path
        if sandboxConfig {
            try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
            let config = scratch.appendingPathComponent("config.lua")
            try #"return { profiles = { sandbox = { sandbox = true } } }"#.write(to: config, atomically: true, encoding: .utf8)
            environment["HUBSCRIPT_CONFIG"] = config.path
        }
        environment.merge(extra) { $1 }
        return environment
    }

    /// Runs `hubscript args…` in `directory` on a pseudo-terminal (`script(1)`), to its
    /// end: what the terminal got (stdout and stderr together, each `\r\n` made `\n`)
    /// and the exit status. Skips the test when there is no script(1).
    static func onATerminal(_ args: [String], in directory: URL, environment: [String: String],
                            timeout: Double = 60) throws -> (status: Int32, screen: String) {
        let script = "/usr/bin/script"
        guard FileManager.default.isExecutableFile(atPath: script) else { throw XCTSkip("no script(1)") }
        let quoted = ([binary.path] + args).map { "'" + $0.replacingOccurrences(of: "'", with: "'\\''") + "'" }
        let p = Process()
        p.executableURL = URL(fileURLWithPath: script)
        p.arguments = ["-qec", quoted.joined(separator: " "), "/dev/null"]
        p.currentDirectoryURL = directory
        p.environment = environment
        p.standardInput = FileHandle.nullDevice
        let done = try collect(p, timeout: timeout)
        return (done.status, String(decoding: done.stdout, as: UTF8.self).replacingOccurrences(of: "\r\n", with: "\n"))
    }

    /// Runs `hubscript args…` exactly as written (no `--state-dir` added) in `directory`,
    /// killing it after `timeout` seconds. The environment is `isolatedEnvironment` of a
    /// fresh scratch folder (removed afterwards) unless `environment` is given.
    static func run(_ args: [String], in directory: URL, timeout: Double = 20,
                    environment: [String: String]? = nil) throws -> Result {
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-cli-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: scratch) }
        let process = process(args, in: directory, environment: try environment ?? isolatedEnvironment(scratch: scratch))
        return try collect(process, timeout: timeout).result
    }
}

private final class BundleMarker {}
