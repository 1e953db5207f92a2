import Foundation
import HTTPKit
import XCTest

/// `hubscript test` on a shared library must be as safe as running its recipes: a test
/// runs recipes and passes `file` parameters only from its own folder (or its library),
/// no connection it opens leaves the process, and the kill options take whole numbers
/// from 1 only (docs/recipe-tests.md).
final class RecipeTestConfinementTests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    /// A recipe that prints the first field of each row of its `file` parameter.
    static let reader = """
    recipe { name = "reader", params = { file = { type = "file" } } }
    for row in csv.rows(params.file) do print("read " .. tostring(row.secret)) end
    """

    /// `t/`: the test's folder, with the reader, a fixture inside and a subfolder; a private
    /// CSV beside `t/` (`private.csv`), and a link in `t/` that points at it.
    func layout() throws -> (folder: String, privateFile: String) {
        try cli.file("t/reader.lua", Self.reader)
        try cli.file("t/data/ok.csv", "secret\nfixture-value\n")
        try cli.file("private.csv", "secret\nTOP-SECRET\n")
        try cli.file("elsewhere/reader.lua", Self.reader)
        try FileManager.default.createSymbolicLink(atPath: cli.root.appendingPathComponent("t/link.csv").path,
                                                   withDestinationPath: cli.root.appendingPathComponent("private.csv").path)
        try FileManager.default.createSymbolicLink(atPath: cli.root.appendingPathComponent("t/out").path,
                                                   withDestinationPath: cli.root.appendingPathComponent("elsewhere").path)
        let real = cli.root.appendingPathComponent("t").resolvingSymlinksInPath().path
        return (real, cli.root.appendingPathComponent("private.csv").resolvingSymlinksInPath().path)
    }

    func testRecipesAndFileParametersStayInTheTestsFolder() throws {
        let (tFolder, privateFile) = try layout()
        let outside = "is outside the test's folder (\(tFolder))"
        try cli.file("t/paths_test.lua", """
        local s = test.sandbox{}
        local function refused(path, params, message)
          expect(function() s:run(path, params) end).to_fail_with(message)
        end
        test.case("a fixture inside the folder is read", function()
          local r = s:run("reader.lua", { file = "data/ok.csv" })
          expect(r).to_succeed()
          expect(r.output).to_equal { "read fixture-value" }
        end)
        test.case("an absolute recipe path", function()
          refused("\(cli.root.path)/elsewhere/reader.lua", { file = "data/ok.csv" },
            "s:run: recipe \(cli.root.path)/elsewhere/reader.lua is an absolute path; name the recipe relative to the test file, inside the test's folder (\(tFolder))")
        end)
        test.case("a recipe up and out", function()
          refused("../elsewhere/reader.lua", { file = "data/ok.csv" },
            "s:run: recipe ../elsewhere/reader.lua \(outside); a recipe test runs only the recipes there")
        end)
        test.case("a recipe through a link out", function()
          refused("out/reader.lua", { file = "data/ok.csv" },
            "s:run: recipe out/reader.lua \(outside); a recipe test runs only the recipes there")
        end)
        test.case("an absolute file", function()
          refused("reader.lua", { file = "\(privateFile)" },
            "s:run: parameter 'file' (\(privateFile)) is an absolute path; give a path relative to the test file, inside the test's folder (\(tFolder))")
        end)
        test.case("a file up and out", function()
          refused("reader.lua", { file = "../private.csv" },
            "s:run: parameter 'file' (../private.csv) \(outside); a recipe test reads only files there; give a path relative to the test file, inside the test's folder (\(tFolder))")
        end)
        test.case("a file up and back in is fine", function()
          expect(s:run("reader.lua", { file = "../t/data/ok.csv" }).output).to_equal { "read fixture-value" }
        end)
        test.case("a file through a link out", function()
          refused("reader.lua", { file = "link.csv" },
            "s:run: parameter 'file' (link.csv) \(outside); a recipe test reads only files there; give a path relative to the test file, inside the test's folder (\(tFolder))")
        end)
        test.case("a file in a linked folder out", function()
          refused("reader.lua", { file = "out/../../private.csv" },
            "s:run: parameter 'file' (out/../../private.csv) \(outside); a recipe test reads only files there; give a path relative to the test file, inside the test's folder (\(tFolder))")
        end)
        """)
        let result = try cli.hubscript("test", "t")
        XCTAssertFalse(result.stdout.contains("TOP-SECRET"), result.stdout)
        XCTAssertEqual(result.stdout, """
        ok   t/paths_test.lua: a fixture inside the folder is read
        ok   t/paths_test.lua: an absolute recipe path
        ok   t/paths_test.lua: a recipe up and out
        ok   t/paths_test.lua: a recipe through a link out
        ok   t/paths_test.lua: an absolute file
        ok   t/paths_test.lua: a file up and out
        ok   t/paths_test.lua: a file up and back in is fine
        ok   t/paths_test.lua: a file through a link out
        ok   t/paths_test.lua: a file in a linked folder out
        9 passed, 0 failed

        """)
        XCTAssertEqual(result.status, 0)
    }

    /// A test kept in a library's `tests/` folder may run the library's recipes and read
    /// its files, and nothing beyond the library.
    func testATestInsideALibraryReachesThatLibrary() throws {
        try cli.file("hubscript.config.lua", """
        return { profiles = { dev = { sandbox = true } }, libraries = { ops = "shared/ops" } }
        """)
        try cli.file("shared/ops/reader.lua", Self.reader)
        try cli.file("shared/ops/fixtures/ok.csv", "secret\nlibrary-fixture\n")
        try cli.file("shared/private.csv", "secret\nTOP-SECRET\n")
        let library = cli.root.appendingPathComponent("shared/ops").resolvingSymlinksInPath().path
        try cli.file("shared/ops/tests/reader_test.lua", """
        test.case("the library's recipe and fixture", function()
          expect(test.sandbox{}:run("../reader.lua", { file = "../fixtures/ok.csv" }).output).to_equal { "read library-fixture" }
        end)
        test.case("not beyond the library", function()
          expect(function() test.sandbox{}:run("../reader.lua", { file = "../../private.csv" }) end).to_fail_with(
            "s:run: parameter 'file' (../../private.csv) is outside the test's folder (\(library)/tests) or its library ops (\(library)); a recipe test reads only files there")
        end)
        """)
        XCTAssertEqual(try cli.hubscript("trust", "--config", "hubscript.config.lua").status, 0)
        let result = try cli.hubscript("test", "shared/ops", "--config", "hubscript.config.lua")
        XCTAssertEqual(result.stdout, """
        ok   shared/ops/tests/reader_test.lua: the library's recipe and fixture
        ok   shared/ops/tests/reader_test.lua: not beyond the library
        2 passed, 0 failed

        """)
        XCTAssertEqual(result.status, 0, result.stderrWithoutRunStart)
    }

    /// `dispatch.connect` in a test reaches the test's sandbox Dispatch, even when the
    /// configuration binds the target to a real server: that server hears nothing. A URL
    /// named by the recipe is refused as in any run.
    func testConnectionsOfATestStayInProcess() throws {
        let heard = CapturedHeaders()
        let receiver = try HTTPServer { request in
            heard.append(request.target)
            return HTTPResponseMessage(status: 200, headers: ["Content-Type": "application/json"],
                                       body: Data(#"{"id":"ntf_1","accepted_devices":1}"#.utf8))
        }
        receiver.start()
        defer { receiver.stop() }
        try cli.file("hubscript.config.lua", """
        return { dispatch_targets = { ops = { url = "http://127.0.0.1:\(receiver.port)/v1", token_ref = "env:OPS_TOKEN" } },
                 profiles = { local_sandbox = { sandbox = true } } }
        """)
        XCTAssertEqual(chmod(cli.root.appendingPathComponent("hubscript.config.lua").path, 0o600), 0)
        try cli.file("notify.lua", """
        recipe { name = "notify", needs = { "dispatch.send" }, targets = { "ops" } }
        local conn = dispatch.connect("ops")
        print(conn:send { title = "leak", body = "private" }.accepted_devices)
        """)
        try cli.file("leak.lua", """
        recipe { name = "leak", params = { url = { type = "string" } }, needs = { "dispatch.send" } }
        dispatch.connect { url = params.url }
        """)
        try cli.file("notify_test.lua", """
        test.case("stays in the sandbox", function()
          local s = test.sandbox{ as = "admin@example.com" }
          expect(s:run("notify.lua")).to_succeed()
          local sent = s:dispatch_sent()
          expect(#sent).to_be(1)
          expect(sent[1].title).to_be("leak")
        end)
        test.case("a URL is refused", function()
          local s = test.sandbox{ as = "admin@example.com" }
          local r = s:run("leak.lua", { url = "http://127.0.0.1:\(receiver.port)/v1" })
          expect(r.failure.message).to_match("a recipe gives no URL or token")
        end)
        """)
        let result = try cli.hubscript("test", "notify_test.lua", "--config", "hubscript.config.lua")
        XCTAssertEqual(result.stdout, "ok   notify_test.lua: stays in the sandbox\nok   notify_test.lua: a URL is refused\n2 passed, 0 failed\n",
                       result.stderrWithoutRunStart)
        XCTAssertEqual(heard.values, [], "a test's connection reached a real server")
    }

    func testKillAfterWritesTakesAWholeNumberFromOne() throws {
        try cli.file("three.lua", RecipeTestRunnerTests.threeWrites)
        let prefix = "s:run: kill_after_writes must be a whole number from 1 (the writes made before the kill), got "
        try cli.file("kill_test.lua", """
        local function refused(value, shown)
          expect(function() test.sandbox{}:run("three.lua", {}, { kill_after_writes = value }) end)
            .to_fail_with("\(prefix)" .. shown)
        end
        test.case("bad values", function()
          refused(0, "0")
          refused(-1, "-1")
          refused(1.5, "1.5")
          refused("2", "a string")
          refused(true, "a boolean")
          refused({}, "a table")
          refused(2^31, "2147483648")
        end)
        test.case("a whole number, written as a float too", function()
          local s = test.sandbox{ fixtures = { users = { { id = "usr_temp", email = "temp@example.com" } } } }
          local r = s:run("three.lua", {}, { kill_after_writes = 2.0 })
          expect(r.killed).to_be(true)
          expect(r.writes).to_be(2)
        end)
        """)
        let result = try cli.hubscript("test", "kill_test.lua")
        XCTAssertEqual(result.stdout, """
        ok   kill_test.lua: bad values
        ok   kill_test.lua: a whole number, written as a float too
        2 passed, 0 failed

        """)
        XCTAssertEqual(result.status, 0)
    }
}
