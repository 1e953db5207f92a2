import Foundation
import XCTest

/// A run's parameters hold at most 1 MiB (they are journalled with it): a larger params
/// file is refused before it is read whole, by its size or as soon as a pipe gives
/// more, and so are `--param` values adding up past it. Exit 2, nothing run.
final class ParamsSizeCLITests: XCTestCase {
    var cli: CLIHarness!
    var recipe: String!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        recipe = try cli.file("p.lua", """
            recipe { name = "p", version = "1.0.0", description = "d",
                     params = { note = { type = "string" }, tags = { type = "list", default = {} } } }
            print(#(params.note or ""), #params.tags)
            """)
    }

    let advice = "Pass large data as a file parameter (type = \"file\": its path is journalled, the recipe reads the file)"

    func assertRefused(_ args: [String], _ message: String, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try cli.run(args)
        XCTAssertEqual(r.status, 2, r.output, file: file, line: line)
        XCTAssertEqual(r.stdout, "", file: file, line: line)
        XCTAssertTrue(r.stderr.hasSuffix(message + "\n"), r.stderr, file: file, line: line)
        XCTAssertEqual(try cli.run(["runs", "list"], expect: 0).stdout, "no runs yet\n", "nothing journalled", file: file, line: line)
    }

    func testAHugeParamsFileIsRefusedByItsSizeWithoutReadingIt() throws {
        let path = cli.root.appendingPathComponent("huge.json").path
        XCTAssertTrue(FileManager.default.createFile(atPath: path, contents: nil))
        XCTAssertEqual(truncate(path, 300 << 20), 0)   // sparse: 300 MiB of nothing
        let started = Date()
        try assertRefused(["run", recipe!, "--params-file", path], """
            error: the params file \(path) is 300.0 MiB; a params file holds at most 1 MiB (parameters are journalled \
            with the run). \(advice)
            """)
        XCTAssertLessThan(Date().timeIntervalSince(started), 10)
    }

    func testAnEndlessParamsStreamIsCutAtTheLimit() throws {
        try assertRefused(["run", recipe!, "--params-file", "/dev/zero"], """
            error: the params file /dev/zero is larger than 1 MiB; a params file holds at most 1 MiB (parameters are \
            journalled with the run). \(advice)
            """)
    }

    func testParametersAddingUpPastTheLimitAreRefused() throws {
        let item = String(repeating: "x", count: 120 << 10)
        let args: [String] = ["run", recipe!] + (0..<10).flatMap { _ -> [String] in ["--param", "tags=" + item] }
        try assertRefused(args, """
            error: the parameters take 1.2 MiB (largest: 'tags'); a run's parameters hold at most 1 MiB (they are \
            journalled with the run). \(advice)
            """)
        // The same through a job's or a resumed run's typed values: ParamsSizeTests.
    }

    func testParametersUnderTheLimitRun() throws {
        let json = cli.root.appendingPathComponent("ok.json").path
        try Data(("{\"note\": \"" + String(repeating: "y", count: 900 << 10) + "\"}").utf8).write(to: URL(fileURLWithPath: json))
        let r = try cli.run(["run", recipe!, "--params-file", json], expect: 0)
        XCTAssertEqual(r.stdout, "921600\t0\n")
    }
}
