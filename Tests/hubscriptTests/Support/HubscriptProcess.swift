import Foundation
import XCTest

/// Runs the built `hubscript` binary and captures stdout, stderr and the exit code
/// separately. Each test gets its own working directory so paths in messages are the
/// relative paths the test passed.
struct HubscriptProcess {
    struct Result {
        let stdout: String
        /// stderr without the line that announces the run id (`RunStartLine`), which
        /// RunLifecycleTests checks; the rest is exact.
        let stderr: String
        let exitCode: Int32
        let seconds: Double
        /// stderr as the process wrote it.
        var rawStderr = ""
    }

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

    static var binary: URL { productsDirectory.appendingPathComponent("hubscript") }

    /// The repository root, found from this file's path.
    static var repositoryRoot: URL {
        URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().deletingLastPathComponent()
    }

    /// Runs `hubscript args…` in `directory`; kills it after `timeout` seconds.
    static func run(_ args: [String], in directory: URL, timeout: Double = 20) throws -> Result {
        let process = Process()
        process.executableURL = binary
        process.arguments = args
        process.currentDirectoryURL = directory
        let scratch = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-cli-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: scratch, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        let outURL = scratch.appendingPathComponent("stdout")
        let errURL = scratch.appendingPathComponent("stderr")
        _ = FileManager.default.createFile(atPath: outURL.path, contents: nil)
        _ = FileManager.default.createFile(atPath: errURL.path, contents: nil)
        let out = try FileHandle(forWritingTo: outURL)
        let err = try FileHandle(forWritingTo: errURL)
        process.standardOutput = out
        process.standardError = err
        process.standardInput = FileHandle.nullDevice
        // Isolated from the machine's state and configuration: a fresh state directory
        // and a config naming the built-in sandbox (so no "no configuration" notice).
        let config = scratch.appendingPathComponent("config.lua")
        try #"return { profiles = { sandbox = { sandbox = true } } }"#.write(to: config, atomically: true, encoding: .utf8)
        var environment = ProcessInfo.processInfo.environment
        environment["XDG_STATE_HOME"] = scratch.appendingPathComponent("state").path
        environment["XDG_CONFIG_HOME"] = scratch.appendingPathComponent("config").path
        environment["HUBSCRIPT_CONFIG"] = config.path
        process.environment = environment
        let start = Date()
        try process.run()
        let killer = DispatchWorkItem { [process] in if process.isRunning { process.terminate() } }
        DispatchQueue.global().asyncAfter(deadline: .now() + timeout, execute: killer)
        process.waitUntilExit()
        killer.cancel()
        let seconds = Date().timeIntervalSince(start)
        try out.close()
        try err.close()
        let rawStderr = String(decoding: try Data(contentsOf: errURL), as: UTF8.self)
        return Result(stdout: String(decoding: try Data(contentsOf: outURL), as: UTF8.self),
                      stderr: RunStartLine.removing(from: rawStderr),
                      exitCode: process.terminationStatus, seconds: seconds, rawStderr: rawStderr)
    }
}

private final class BundleMarker {}

/// A temporary folder to write fixture recipes into.
struct TemporaryFolder {
    let url: URL

    init() throws {
        url = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-cli-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
    }

    func write(_ name: String, _ text: String) throws {
        let file = url.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: file.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: file)
    }

    func remove() { try? FileManager.default.removeItem(at: url) }
}

/// CLI tests: a temporary folder per test, the binary run inside it.
class CLITestCase: XCTestCase {
    private(set) var folder: TemporaryFolder!

    override func setUpWithError() throws {
        try super.setUpWithError()
        guard FileManager.default.isExecutableFile(atPath: HubscriptProcess.binary.path) else {
            throw XCTSkip("hubscript binary not built at \(HubscriptProcess.binary.path); run 'swift build' first")
        }
        folder = try TemporaryFolder()
    }

    override func tearDown() {
        folder?.remove()
        super.tearDown()
    }

    /// Runs hubscript in the test's folder.
    func hubscript(_ args: String..., timeout: Double = 20) throws -> HubscriptProcess.Result {
        try HubscriptProcess.run(args, in: folder.url, timeout: timeout)
    }

    /// Runs hubscript in the repository root (for the shipped recipes).
    func hubscriptInRepo(_ args: String...) throws -> HubscriptProcess.Result {
        try HubscriptProcess.run(args, in: HubscriptProcess.repositoryRoot)
    }

    func assertResult(_ result: HubscriptProcess.Result, stdout: String, stderr: String, exitCode: Int32,
                      file: StaticString = #filePath, line: UInt = #line) {
        XCTAssertEqual(result.stdout, stdout, "stdout", file: file, line: line)
        XCTAssertEqual(result.stderr, stderr, "stderr", file: file, line: line)
        XCTAssertEqual(result.exitCode, exitCode, "exit code", file: file, line: line)
    }
}
