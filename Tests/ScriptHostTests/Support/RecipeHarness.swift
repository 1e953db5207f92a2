import Foundation
import XCTest
import ScriptHost

/// Runs recipe text in-process with small limits, the way the CLI would, and keeps
/// what it printed. Each run gets a fresh temporary folder that holds the recipe
/// file, so `require` searches a folder the test controls.
struct RecipeHarness {
    /// The folder the recipe lives in (removed by `cleanUp()`).
    let folder: URL
    var limits: RunLimits
    var plugins: [Plugin] = [JSONPlugin.make()]
    var libraryFolders: [URL] = []
    var gate: (@Sendable (ScriptFunction) throws -> Void)?

    /// Limits small enough to keep bombs fast: 32 MiB, 8 MiB per built string, and a
    /// 5 s safety timeout (tests of the timeout itself set a shorter one, so a memory
    /// or instruction test on a loaded machine cannot end as a timeout instead).
    static var smallLimits: RunLimits {
        var l = RunLimits()
        l.timeoutSeconds = 5
        l.memoryBytes = 32 << 20
        l.buildBytes = 8 << 20
        return l
    }

    init(limits: RunLimits = RecipeHarness.smallLimits) throws {
        folder = FileManager.default.temporaryDirectory
            .appendingPathComponent("hubscript-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        self.limits = limits
    }

    func cleanUp() {
        try? FileManager.default.removeItem(at: folder)
    }

    /// The folder with symbolic links resolved, as the module resolver reports it.
    var resolvedFolder: String { folder.standardizedFileURL.resolvingSymlinksInPath().path }

    /// Writes `text` to `name` inside the recipe folder.
    @discardableResult
    func write(_ name: String, _ text: String) throws -> URL {
        let url = folder.appendingPathComponent(name)
        try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
        try Data(text.utf8).write(to: url)
        return url
    }

    struct Outcome {
        let report: RunReport
        let output: MemoryOutput
        var failure: ScriptFailure? { report.failure }
        var lines: [String] { output.lines }
        /// The failure message, or "" for a run that succeeded.
        var message: String { report.failure?.message ?? "" }
    }

    /// Runs `source` as `recipes/t.lua` (the display path used in messages).
    /// `RunConfiguration.leavesLuaStateToExit` for the next runs.
    var leavesLuaStateToExit = false

    func run(_ source: String, displayPath: String = "recipes/t.lua") -> Outcome {
        let url = folder.appendingPathComponent("t.lua")
        try? Data(source.utf8).write(to: url)
        let output = MemoryOutput()
        var configuration = RunConfiguration(output: output)
        configuration.limits = limits
        configuration.plugins = plugins
        configuration.libraryFolders = libraryFolders
        configuration.gate = gate
        configuration.leavesLuaStateToExit = leavesLuaStateToExit
        let report = ScriptRuntime.run(RecipeFile(displayPath: displayPath, url: url, source: source),
                                       configuration: configuration)
        return Outcome(report: report, output: output)
    }
}

/// A test case with a harness per test.
class RecipeTestCase: XCTestCase {
    private var _harness: RecipeHarness?

    var harness: RecipeHarness {
        get {
            if let _harness { return _harness }
            let h = try! RecipeHarness()
            _harness = h
            return h
        }
        set { _harness = newValue }
    }

    override func tearDown() {
        _harness?.cleanUp()
        _harness = nil
        super.tearDown()
    }

    /// Runs `source` and returns what it printed; fails the test if the run failed.
    func lines(_ source: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        let outcome = harness.run(source)
        XCTAssertNil(outcome.failure, "run failed: \(outcome.message)", file: file, line: line)
        return outcome.lines
    }

    /// Runs `source`, asserts it failed with `kind` and exactly `message`.
    @discardableResult
    func assertFails(_ source: String, kind: ScriptFailure.Kind, message: String,
                     file: StaticString = #filePath, line: UInt = #line) -> RecipeHarness.Outcome {
        let outcome = harness.run(source)
        guard let failure = outcome.failure else {
            XCTFail("expected a failure, the run succeeded; printed \(outcome.lines)", file: file, line: line)
            return outcome
        }
        XCTAssertEqual(failure.kind, kind, "message: \(failure.message)", file: file, line: line)
        XCTAssertEqual(failure.message, message, file: file, line: line)
        return outcome
    }

    /// Asserts a normal recipe still runs after whatever ran before in this process.
    func assertFreshRunWorks(file: StaticString = #filePath, line: UInt = #line) {
        let outcome = harness.run("local t = {} for i = 1, 100 do t[i] = i end print(#t, json.encode({ok = true}))")
        XCTAssertNil(outcome.failure, "a normal run failed after a limit: \(outcome.message)", file: file, line: line)
        XCTAssertEqual(outcome.lines, ["100\t{\"ok\":true}"], file: file, line: line)
        XCTAssertEqual(outcome.report.exitCode, 0, file: file, line: line)
    }
}

/// Lua text quoting for building recipe sources from Swift strings.
func luaQuoted(_ s: String) -> String {
    "\"" + s.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"")
        .replacingOccurrences(of: "\n", with: "\\n") + "\""
}

/// The limit messages, as `ScriptRuntime` words them for `RecipeHarness.smallLimits`.
enum LimitMessages {
    static let memory32 =
        "limit exceeded: memory (32 MiB); raise limits.memory_mb in the recipe manifest if the recipe really needs more"
    static func instructions(_ n: Int64) -> String {
        "limit exceeded: instructions (\(n)); raise limits.instructions in the recipe manifest if the work is expected"
    }
    static func timeout(_ text: String) -> String {
        "limit exceeded: timeout (\(text)); raise it with --timeout or limits.timeout in the recipe manifest"
    }
}

extension RecipeTestCase {
    /// Runs `source` on another thread and waits at most `seconds`; nil (and a test
    /// failure) if the run did not return, so a hang cannot stall the suite.
    func runWithin(seconds: Double, _ source: String,
                   file: StaticString = #filePath, line: UInt = #line) -> RecipeHarness.Outcome? {
        let box = OutcomeBox()
        let done = DispatchSemaphore(value: 0)
        let harness = self.harness
        Thread.detachNewThread {
            box.set(harness.run(source))
            done.signal()
        }
        guard done.wait(timeout: .now() + seconds) == .success else {
            XCTFail("the run did not return within \(seconds) s", file: file, line: line)
            return nil
        }
        return box.get()
    }
}

final class OutcomeBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: RecipeHarness.Outcome?
    func set(_ v: RecipeHarness.Outcome) { lock.withLock { value = v } }
    func get() -> RecipeHarness.Outcome? { lock.withLock { value } }
}
