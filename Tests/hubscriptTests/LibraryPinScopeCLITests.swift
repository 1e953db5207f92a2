import Foundation
import XCTest

/// A run checks the pins of what it loads (docs/libraries.md): its own library, whole,
/// before it starts; any other library's module as `require` loads it. One changed file
/// in one library stops only the runs that would load it — not every run, job and
/// trigger of the configuration — and `verify` still reports every change.
final class LibraryPinScopeCLITests: XCTestCase {
    var cli: CLIHarness!
    var config: String!
    var lock: String { cli.root.appendingPathComponent("hubscript.lock").path }

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        try cli.file("libs/alpha/hello.lua", """
            recipe { name = "hello" }
            print(require("alpha.words").text)
            """)
        try cli.file("libs/alpha/words.lua", "return { text = 'alpha words' }\n")
        try cli.file("libs/beta/greet.lua", """
            recipe { name = "greet" }
            print(require("beta.words").text)
            """)
        try cli.file("libs/beta/words.lua", "return { text = 'beta words' }\n")
        try cli.file("libs/beta/other.lua", "return { text = 'other' }\n")
        try cli.file("mixed.lua", """
            recipe { name = "mixed" }
            print(require("alpha.words").text)
            print("before beta")
            print(require("beta.words").text)
            """)
        config = try cli.file("hubscript.config.lua", """
            return { profiles = { dev = { sandbox = true } }, libraries = { alpha = "libs/alpha", beta = "libs/beta" },
                     jobs = { nightly = { recipe = "alpha:hello", schedule = "0 * * * *" } } }
            """)
        XCTAssertEqual(try hubscript("trust").status, 0)
    }

    func hubscript(_ args: String...) throws -> CLIHarness.Result { try cli.run(args + ["--config", config]) }

    /// The SHA-256 of `text` as hex (what `hubscript.lock` records).
    func sha256(_ text: String) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/sha256sum")
        let input = Pipe(), output = Pipe()
        p.standardInput = input
        p.standardOutput = output
        try p.run()
        input.fileHandleForWriting.write(Data(text.utf8))
        try input.fileHandleForWriting.close()
        let data = output.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        return String(String(decoding: data, as: UTF8.self).prefix(64))
    }

    func testAChangedFileInOneLibraryDoesNotStopRecipesOfAnother() throws {
        try cli.file("libs/beta/other.lua", "return { text = 'changed' }\n")
        let r = try hubscript("alpha:hello")
        XCTAssertEqual(r.stdout, "alpha words\n")
        XCTAssertEqual(r.status, 0, r.stderr)
        // Nor a job of the unchanged library.
        let job = try hubscript("jobs", "run", "nightly", "--now", "2026-01-01T10:20:00Z")
        XCTAssertEqual(job.status, 0, job.output)
        XCTAssertTrue(job.stdout.hasPrefix("alpha words\n"), job.stdout)
        // A recipe outside every library that loads only unchanged modules runs.
        try cli.file("only-alpha.lua", "recipe { name = \"a\" }\nprint(require(\"alpha.words\").text)\n")
        XCTAssertEqual(try hubscript("run", "only-alpha.lua").stdout, "alpha words\n")
        // verify still reports every change.
        let verify = try hubscript("verify")
        XCTAssertEqual(verify.status, 1)
        XCTAssertTrue(verify.stdout.hasPrefix("changed: beta/other.lua (sha256 "), verify.stdout)
    }

    func testAChangedRecipeOfALibraryOrAnyFileOfItsLibraryRefusesAtStart() throws {
        try cli.file("libs/beta/other.lua", "return { text = 'changed' }\n")
        // The recipe itself is unchanged, but its library is not: nothing runs.
        var r = try hubscript("beta:greet")
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("library files changed since they were trusted (\(lock)); nothing ran:\n  changed: beta/other.lua (sha256 "),
                      r.stderr)
        XCTAssertTrue(r.stderr.hasSuffix("Review the changes, then run hubscript trust beta to pin them (hubscript verify lists them again).\n"),
                      r.stderr)
        // The recipe file changed: refused at start, by name or by path.
        XCTAssertEqual(try hubscript("trust", "beta").status, 0)
        try cli.file("libs/beta/greet.lua", "recipe { name = \"greet\" }\nprint('changed recipe')\n")
        for args in [["beta:greet"], ["run", "libs/beta/greet.lua"]] {
            r = try cli.run(args + ["--config", config])
            XCTAssertEqual(r.stdout, "", "\(args)")
            XCTAssertEqual(r.status, 2, "\(args)")
            XCTAssertTrue(r.stderr.contains("nothing ran:\n  changed: beta/greet.lua (sha256 "), r.stderr)
        }
        // A file added to the library refuses its recipes too.
        XCTAssertEqual(try hubscript("trust", "beta").status, 0)
        try cli.file("libs/beta/new.lua", "return 1\n")
        r = try hubscript("beta:greet")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("nothing ran:\n  added: beta/new.lua\n"), r.stderr)
    }

    func testARecipeRequiringAChangedModuleFailsAtTheRequireWithTheFileAndBothDigests() throws {
        let old = "return { text = 'beta words' }\n", new = "return { text = 'CHANGED' }\n"
        try cli.file("libs/beta/words.lua", new)
        let r = try hubscript("run", "mixed.lua")
        XCTAssertEqual(r.stdout, "alpha words\nbefore beta\n")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("""
            error: mixed.lua:4: library file beta/words.lua changed since it was trusted: \(lock) pins sha256 \(try sha256(old)), \
            the file now has sha256 \(try sha256(new)); review it, then run hubscript trust beta (hubscript verify lists every change)

            """), r.stderr)
        XCTAssertFalse(r.stdout.contains("CHANGED"))
    }

    func testAModuleAddedOrNeverTrustedIsRefusedAtTheRequire() throws {
        try cli.file("libs/beta/extra.lua", "return { text = 'extra' }\n")
        try cli.file("extra.lua", "recipe { name = \"extra\" }\nprint(require(\"beta.extra\").text)\n")
        var r = try hubscript("run", "extra.lua")
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("""
            error: extra.lua:2: library file beta/extra.lua is not pinned in \(lock) (added since beta was trusted; \
            sha256 \(try sha256("return { text = 'extra' }\n"))); review it, then run hubscript trust beta

            """), r.stderr)
        // No lock at all: each library is untrusted as it loads.
        try FileManager.default.removeItem(atPath: lock)
        r = try hubscript("run", "mixed.lua")
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.status, 1)
        XCTAssertTrue(r.stderr.contains("""
            error: mixed.lua:2: library alpha is not trusted yet (no \(lock)); review its files, then run hubscript trust alpha

            """), r.stderr)
        // A recipe that loads no library still runs.
        try cli.file("plain.lua", "recipe { name = \"plain\" }\nprint('plain')\n")
        XCTAssertEqual(try hubscript("run", "plain.lua").stdout, "plain\n")
    }
}
