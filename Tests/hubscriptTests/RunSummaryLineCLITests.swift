import Foundation
import XCTest

/// Every run ends with its closing line for people, also one that made no Hub call;
/// under `--json`, a run refused before it starts (a missing parameter) says why on
/// stderr too, in one line, as every other `--json` refusal does.
final class RunSummaryLineCLITests: XCTestCase {
    var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
        try cli.file("hello.lua", "recipe { name = \"hello\" }\nprint(\"hello\")\n")
        try cli.file("needs-day.lua", """
            recipe { name = "needs-day", params = { day = { type = "string", required = true } } }
            print(params.day)
            """)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    func expectStatus(_ r: CLIHarness.Result, _ status: Int32, file: StaticString = #filePath, line: UInt = #line) -> CLIHarness.Result {
        XCTAssertEqual(r.status, status, r.output, file: file, line: line)
        return r
    }

    /// `stderr` with run ids as RUN and durations as T.
    static func stable(_ stderr: String) -> String {
        var text = stderr.replacingOccurrences(of: #"run_[0-9A-Za-z_]+"#, with: "RUN", options: .regularExpression)
        text = text.replacingOccurrences(of: #" in \d+\.\d\d s\n"#, with: " in T s\n", options: .regularExpression)
        return text
    }

    func testARunWithoutHubCallsEndsWithItsClosingLine() throws {
        let r = expectStatus(try cli.hubscript("run", "hello.lua"), 0)
        XCTAssertEqual(r.stdout, "hello\n")
        XCTAssertEqual(Self.stable(r.stderr), """
            run RUN started; if it stops, resume it with: hubscript runs resume RUN
            done: run RUN — 0 reads, 0 writes in T s

            """)
        let quiet = expectStatus(try cli.hubscript("run", "hello.lua", "--quiet"), 0)
        XCTAssertEqual(Self.stable(quiet.stderr), "done: run RUN — 0 reads, 0 writes in T s\n")
    }

    func testAFailedRunWithoutHubCallsSaysItStopped() throws {
        try cli.file("fails.lua", "recipe { name = \"fails\" }\nerror(\"boom\", 0)\n")
        let r = expectStatus(try cli.hubscript("run", "fails.lua", "--quiet"), 1)
        XCTAssertTrue(Self.stable(r.stderr).hasPrefix("error: boom\n"), r.stderr)
        XCTAssertTrue(Self.stable(r.stderr).hasSuffix("\nstopped: run RUN — 0 reads, 0 writes in T s\n"), r.stderr)
    }

    func testAJSONRunWithoutHubCallsHasItsSummaryAndNothingOnStderr() throws {
        let r = expectStatus(try cli.hubscript("run", "hello.lua", "--json"), 0)
        XCTAssertEqual(r.stderr, "")
        let summary = try XCTUnwrap(JSONLines.objects(r.stdout).last)
        XCTAssertEqual(summary["type"] as? String, "summary")
        XCTAssertEqual(summary["reads"] as? Int, 0)
        XCTAssertEqual(summary["writes"] as? Int, 0)
    }

    static let missingDay = "missing required parameter 'day' (string); pass --param day=…"

    func testAMissingParameterUnderJSONIsAnEventAndOneLineOnStderr() throws {
        let r = expectStatus(try cli.hubscript("run", "needs-day.lua", "--json"), 2)
        XCTAssertEqual(r.stderr, "error: \(Self.missingDay)\n")
        let events = JSONLines.withoutTimestamps(r.stdout)
        XCTAssertEqual(events, [
            #"{"kind":"load","message":"\#(Self.missingDay)","type":"error"}"#,
            #"{"exit_code":2,"failed":0,"planned":0,"reads":0,"replayed":0,"run_id":null,"schema_version":1,"status":"failed","type":"summary","writes":0}"#,
        ])
        // Without --json: the same message for people, nothing on stdout.
        let plain = expectStatus(try cli.hubscript("run", "needs-day.lua"), 2)
        XCTAssertEqual(plain.stdout, "")
        XCTAssertEqual(plain.stderr, "error: \(Self.missingDay)\n")
    }

    func testEveryRefusalBeforeARunUnderJSONSaysWhyOnStderr() throws {
        // A manifest problem, a wrong parameter type, a recipe that does not exist.
        try cli.file("broken.lua", "recipe { name = 3 }\n")
        try cli.file("typed.lua", "recipe { name = \"typed\", params = { n = { type = \"integer\" } } }\n")
        for args in [["run", "broken.lua", "--json"], ["run", "typed.lua", "--param", "n=x", "--json"],
                     ["run", "missing.lua", "--json"]] {
            let r = try CLIHarness.run(args, in: cli.root)
            XCTAssertNotEqual(r.status, 0)
            XCTAssertTrue(r.stderr.hasPrefix("error: "), "\(args): \(r.stderr)")
            XCTAssertEqual(r.stderr.filter { $0 == "\n" }.count, 1, "\(args): one line: \(r.stderr)")
            let types = JSONLines.objects(r.stdout).map { $0["type"] as? String }
            XCTAssertEqual(types, ["error", "summary"], "\(args): \(r.stdout)")
        }
    }
}

extension JSONLines {
    /// Each `--json` line decoded as an object (a line that is not one is left out).
    static func objects(_ stdout: String) -> [[String: Any]] {
        stdout.split(separator: "\n").compactMap { try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any] }
    }
}
