import Foundation
import XCTest

/// A command reads its configuration file once, at its start: a file rewritten while
/// the command runs — here, broken — changes nothing the command does, whether the
/// command is a run, a resume or `jobs run-due`.
///
/// Each test stops the command part-way by having it read a FIFO the test holds (the
/// params file, the recipe itself, a recipe's `file` parameter), waits until the
/// process has the FIFO open, breaks the configuration file, then lets the command go
/// on. A command that read the file again after that point would stop with the
/// configuration's syntax error.
final class ConfigurationReadOnceCLITests: XCTestCase {
    var cli: CLIHarness!
    var config: String!

    static let broken = "return { profiles = "

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        config = try cli.file("hubscript.config.lua", #"return { default_profile = "lab", profiles = { lab = { sandbox = true } } }"#)
    }

    /// A FIFO the test holds open for reading and writing: a process that opens it
    /// finds a writer, and reads what the test writes once the test closes it.
    final class HeldFIFO {
        let path: String
        private var fd: Int32

        init(_ path: String) throws {
            self.path = path
            guard mkfifo(path, 0o600) == 0 else { throw POSIXError(.EEXIST) }
            fd = open(path, O_RDWR | O_CLOEXEC)
            guard fd >= 0 else { throw POSIXError(.EIO) }
        }

        deinit { if fd >= 0 { close(fd) } }

        /// Whether process `pid` has the FIFO open (Linux: `/proc/PID/fd`).
        func isOpen(in pid: Int32) -> Bool {
            let folder = "/proc/\(pid)/fd"
            let entries = (try? FileManager.default.contentsOfDirectory(atPath: folder)) ?? []
            return entries.contains { (try? FileManager.default.destinationOfSymbolicLink(atPath: folder + "/" + $0)) == path }
        }

        /// Writes `text` and closes the FIFO's last writer: the reader gets `text`, then its end.
        func finish(_ text: String) {
            _ = text.withCString { write(fd, $0, strlen($0)) }
            close(fd)
            fd = -1
        }
    }

    /// Runs `hubscript args…`; once it has `fifo` open, rewrites the configuration as
    /// `Self.broken` and writes `input` to the FIFO. Returns the command's result.
    func run(_ args: [String], pausedAt fifo: HeldFIFO, input: String,
             file: StaticString = #filePath, line: UInt = #line) throws -> CLIHarness.Result {
        let (process, out, err) = cli.process(args + ["--config", config])
        let stdout = LockedData(), stderr = LockedData()
        let readers = [(out, stdout), (err, stderr)].map { pipe, sink in
            Thread { sink.set(pipe.fileHandleForReading.readDataToEndOfFile()) }
        }
        try process.run()
        readers.forEach { $0.start() }
        let deadline = Date().addingTimeInterval(60)
        while process.isRunning && !fifo.isOpen(in: process.processIdentifier) && Date() < deadline { usleep(10_000) }
        XCTAssertTrue(process.isRunning, "the command ended before it read \(fifo.path)", file: file, line: line)
        try cli.file("hubscript.config.lua", Self.broken)
        fifo.finish(input)
        process.waitUntilExit()
        while !(stdout.isSet && stderr.isSet) { usleep(10_000) }
        return CLIHarness.Result(status: process.terminationStatus, stdout: String(decoding: stdout.value, as: UTF8.self),
                                 stderr: String(decoding: stderr.value, as: UTF8.self))
    }

    /// The configuration as broken is refused by the next command: the tests above
    /// would have seen the error, had the command read the file again.
    func assertTheBrokenFileIsRefused(file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try cli.run(["runs", "list", "--config", config])
        XCTAssertEqual(r.status, 2, file: file, line: line)
        XCTAssertTrue(r.stderr.hasPrefix("hubscript runs list: config \(config!): "), r.stderr, file: file, line: line)
    }

    func testARunUsesTheFileAsItWasWhenTheRunStarted() throws {
        let recipe = try cli.file("once.lua", #"recipe { name = "once", params = { n = { type = "string" } } } print(params.n)"#)
        let params = try HeldFIFO(cli.root.appendingPathComponent("params.json").path)
        let r = try run(["run", recipe, "--params-file", params.path], pausedAt: params, input: #"{"n": "seven"}"#)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "seven\n")
        try assertTheBrokenFileIsRefused()
    }

    func testAResumeUsesTheFileAsItWasWhenTheResumeStarted() throws {
        let path = cli.root.appendingPathComponent("flaky.lua").path
        try cli.file("flaky.lua", #"recipe { name = "flaky" } error("the first attempt stops here")"#)
        let first = try cli.run(["run", path, "--run-id", "flaky-1", "--config", config])
        XCTAssertEqual(first.status, 1, first.output)
        // The resume reads the recipe from a FIFO: its text arrives after the file broke.
        try FileManager.default.removeItem(atPath: path)
        let recipe = try HeldFIFO(path)
        let r = try run(["runs", "resume", "flaky-1", "--force"], pausedAt: recipe,
                        input: #"recipe { name = "flaky" } print("resumed")"#)
        XCTAssertEqual(r.status, 0, r.output)
        XCTAssertEqual(r.stdout, "resumed\n")
        try assertTheBrokenFileIsRefused()
    }

    /// Two due jobs, one at a time: the first reads a FIFO while the file breaks; the
    /// second, a recipe of the configuration's library, still finds its library.
    func testJobsRunDueUsesTheFileAsItWasForEveryFire() throws {
        let rows = try HeldFIFO(cli.root.appendingPathComponent("rows.csv").path)
        try cli.file("recipes/count.lua", """
            recipe { name = "count", params = { rows = { type = "file" } } }
            local n = 0
            for _ in csv.rows(params.rows) do n = n + 1 end
            print("rows", n)
            """)
        try cli.file("ops/second.lua", #"recipe { name = "second" } print("second ran")"#)
        config = try cli.file("hubscript.config.lua", """
            return { default_profile = "lab", profiles = { lab = { sandbox = true } }, libraries = { ops = "ops" },
                     jobs = { a_count = { recipe = "recipes/count.lua", schedule = "* * * * *", params = { rows = "\(rows.path)" } },
                              b_second = { recipe = "ops:second", schedule = "* * * * *" } } }
            """)
        XCTAssertEqual(try cli.run(["trust", "--config", config]).status, 0)
        let r = try run(["jobs", "run-due", "--now", "2026-01-01T10:00:05Z", "--concurrency", "1"], pausedAt: rows,
                        input: "name\nada\nbob\n")
        XCTAssertEqual(r.status, 0, r.output)
        let lines = r.stdout.replacingOccurrences(of: #"in \d+\.\d\d s"#, with: "in … s", options: .regularExpression)
            .split(separator: "\n").map(String.init).sorted()
        XCTAssertEqual(lines, ["a_count@2026-01-01T10:00:00Z succeeded in … s", "b_second@2026-01-01T10:00:00Z succeeded in … s",
                               "rows\t2", "second ran"], r.output)
        try assertTheBrokenFileIsRefused()
    }
}

/// Every command opens its configuration file exactly once, however many of its parts
/// it uses (profiles, libraries, the journal, Dispatch targets, jobs) and however many
/// recipes it runs. Counted from outside the process (`FileOpenCounter`).
final class ConfigurationOpenedOnceCLITests: XCTestCase {
    func testEveryCommandOpensItsConfigurationOnce() throws {
        let cli = try CLIHarness(testCase: self)
        let rows = try cli.file("rows.csv", "name\nada\n")
        try cli.file("recipes/count.lua", """
            recipe { name = "count", params = { rows = { type = "file" } }, targets = { "ops" } }
            local tell = require("ops.tell")
            for _ in csv.rows(params.rows) do print(tell.word) end
            """)
        try cli.file("ops/tell.lua", #"return { word = "row" }"#)
        try cli.file("ops/second.lua", #"recipe { name = "second" } print("second")"#)
        try cli.file("flaky.lua", #"recipe { name = "flaky" } if not params then error("never") end error("stops here")"#)
        try cli.file("tests/a_test.lua", #"test.case("a", function() expect(require("ops.tell").word).to_be("row") end)"#)
        let config = try cli.file("hubscript.config.lua", """
            return { default_profile = "lab", profiles = { lab = { sandbox = true } }, libraries = { ops = "ops" },
                     dispatch_targets = { ops = { url = "https://dispatch.example.com", token_ref = "dispatch/ops" } },
                     jobs = { a_count = { recipe = "recipes/count.lua", schedule = "* * * * *", params = { rows = "\(rows)" } },
                              b_second = { recipe = "ops:second", schedule = "* * * * *" } } }
            """)
        let opens = try FileOpenCounter(config)
        let commands: [([String], Int32)] = [
            (["trust"], 0), (["verify"], 0),
            (["run", "recipes/count.lua", "--param", "rows=\(rows)"], 0),
            (["plan", "recipes/count.lua", "--param", "rows=\(rows)"], 0),
            (["run", "ops:second"], 0),
            (["run", "flaky.lua", "--run-id", "flaky-1"], 1), (["runs", "resume", "flaky-1"], 1),
            (["jobs", "run-due", "--now", "2026-01-01T10:00:05Z"], 0), (["jobs", "run", "b_second"], 0),
            (["jobs", "list"], 0), (["jobs", "history"], 0), (["runs", "list"], 0),
            (["test", cli.root.appendingPathComponent("tests").path], 0),
        ]
        for (command, status) in commands {
            let r = try cli.run(command + ["--config", config])
            XCTAssertEqual(r.status, status, "\(command): \(r.output)")
            XCTAssertEqual(opens.opens(), 1, "\(command)")
        }
    }
}
