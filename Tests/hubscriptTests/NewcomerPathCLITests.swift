import Foundation
import XCTest

/// docs/recipe-authoring.md, the page a new admin follows from `new` to `apply`, works as
/// written: its files are written and its commands run in order in an empty folder with
/// a fresh home, against the built-in sandbox, each exiting as the page says and
/// printing what it shows.
final class NewcomerPathCLITests: XCTestCase {
    func testTheRecipeAuthoringPageWorksAsWritten() throws {
        let page = CLIHarness.repoRoot.appendingPathComponent("docs/recipe-authoring.md")
        let walkthrough = DocWalkthrough(markdown: try String(contentsOf: page, encoding: .utf8))
        let commands = walkthrough.steps.filter { if case .command = $0 { true } else { false } }
        XCTAssertGreaterThanOrEqual(commands.count, 6, "the page shows the path as commands")

        let cli = try CLIHarness(testCase: self)
        let folder = cli.root.appendingPathComponent("work")
        let home = cli.root.appendingPathComponent("home")
        let bin = cli.root.appendingPathComponent("bin")
        for dir in [folder, home, bin] { try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true) }
        try FileManager.default.createSymbolicLink(at: bin.appendingPathComponent("hubscript"), withDestinationURL: CLIHarness.binary)
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("HUBSCRIPT_") && !$0.key.hasPrefix("XDG_") }
        environment["HOME"] = home.path
        environment["PATH"] = bin.path + ":" + (environment["PATH"] ?? "/usr/bin:/bin")
        environment["NO_COLOR"] = "1"

        for step in walkthrough.steps {
            switch step {
            case .write(let file, let text):
                try Data(text.utf8).write(to: folder.appendingPathComponent(file))
            case .command(let line, let expectedExit, let expectedOutput):
                let shell = Process()
                shell.executableURL = URL(fileURLWithPath: "/bin/sh")
                shell.arguments = ["-c", "exec 2>&1; " + line]
                shell.currentDirectoryURL = folder
                shell.environment = environment
                let result = try CLIHarness.collect(shell, timeout: 60).result
                XCTAssertEqual(result.status, expectedExit, "$ \(line)\n\(result.stdout)")
                if let missing = DocWalkthrough.firstMissing(expectedOutput, in: result.stdout) {
                    XCTFail("$ \(line): the page shows the line\n  \(missing)\nwhich the command did not print (in order); it printed:\n\(result.stdout)")
                }
            }
        }
    }

    func testTheWalkthroughReaderFindsFilesCommandsExitsAndLines() {
        let page = """
            Write this:

            ```lua file=a.lua
            print(1)
            ```

            ```console
            $ hubscript check a.lua
            ok   a.lua
            $ hubscript a.lua --param x=1   # exit 2
            error: … 'x' …
            ```

            ```sh
            $ not a step
            ```
            """
        XCTAssertEqual(DocWalkthrough(markdown: page).steps, [
            .write(file: "a.lua", text: "print(1)\n"),
            .command(line: "hubscript check a.lua", expectedExit: 0, expectedOutput: ["ok   a.lua"]),
            .command(line: "hubscript a.lua --param x=1", expectedExit: 2, expectedOutput: ["error: … 'x' …"]),
        ])
        XCTAssertNil(DocWalkthrough.firstMissing(["a", "c…"], in: "a\nb\ncde\n"))
        XCTAssertEqual(DocWalkthrough.firstMissing(["c", "a"], in: "a\nb\nc\n"), "a")
        XCTAssertEqual(DocWalkthrough.firstMissing(["x.y"], in: "xzy\n"), "x.y")
    }
}
