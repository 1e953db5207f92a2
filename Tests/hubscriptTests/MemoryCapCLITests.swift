import Foundation
import XCTest
#if canImport(Glibc)
import Glibc
#endif

/// Nothing a binding builds on the Swift side from Lua input escapes
/// the run's memory cap. Goal: for any recipe, peak RSS ≤ 2 × `memory_mb` + the host's
/// own baseline (a trivial recipe's peak, measured in the same test).
final class MemoryCapCLITests: XCTestCase {
    private static let capMiB = 32

    private func manifest(_ body: String) -> String {
        "recipe { name = \"m\", version = \"1.0.0\", description = \"memory\", needs = { \"users.list\" }, limits = { memory_mb = \(Self.capMiB) } }\n"
            + body
    }

    /// Runs the binary on `source`; returns its exit status, peak RSS (bytes) and stderr.
    private func runMeasured(_ cli: CLIHarness, _ name: String, _ source: String) throws -> (status: Int32, peak: Int, stderr: String) {
        let recipe = try cli.file("\(name).lua", manifest(source))
        let errPath = cli.root.appendingPathComponent("\(name).stderr").path
        let args = [cli.binary.path, "run", recipe, "--out", cli.root.path, "--state-dir", cli.stateDir.path]
        var fileActions = posix_spawn_file_actions_t()
        posix_spawn_file_actions_init(&fileActions)
        defer { posix_spawn_file_actions_destroy(&fileActions) }
        posix_spawn_file_actions_addopen(&fileActions, 0, "/dev/null", O_RDONLY, 0)
        posix_spawn_file_actions_addopen(&fileActions, 1, "/dev/null", O_WRONLY, 0)
        posix_spawn_file_actions_addopen(&fileActions, 2, errPath, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        let argv = args.map { strdup($0) } + [nil]
        let envp = cli.environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
        defer { (argv + envp).forEach { free($0) } }
        var pid: pid_t = 0
        let spawned = posix_spawn(&pid, cli.binary.path, &fileActions, nil, argv, envp)
        XCTAssertEqual(spawned, 0, "posix_spawn failed")
        var status: Int32 = 0
        var usage = rusage()
        XCTAssertEqual(wait4(pid, &status, 0, &usage), pid)
        let exit = (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
        let stderr = (try? String(contentsOfFile: errPath, encoding: .utf8)) ?? ""
        return (exit, Int(usage.ru_maxrss) * 1024, stderr)
    }

    private static let memoryMessage =
        "error: limit exceeded: memory (32 MiB); raise limits.memory_mb in the recipe manifest if the recipe really needs more"

    /// Each hostile recipe with its expected exit status and last stderr line.
    private static let hostileRecipes: [(name: String, source: String, status: Int32, errorLine: String?)] = [
        ("decode-14MiB", #"local v = json.decode("[" .. string.rep("1,", 7 * 1024 * 1024) .. "1]")"#, 4, memoryMessage),
        ("decode-object", #"""
            local parts = {}
            for i = 1, 300000 do parts[i] = '"key' .. i .. '":"value number ' .. i .. '"' end
            local s = "{" .. table.concat(parts, ",") .. "}"
            parts = nil
            local v = json.decode(s)
            """#, 4, memoryMessage),
        ("encode-repeated", #"""
            local t = {}
            for i = 1, 400000 do t[i] = i end
            for round = 1, 10 do local x = json.encode(t) end
            """#, 0, nil),
        ("encode-nested", #"""
            local t = {}
            for i = 1, 60000 do t[i] = { id = "row number " .. i, tags = { "a", "b", "c" }, n = i } end
            local x = json.encode(t)
            """#, 4, memoryMessage),
        ("log-fields", #"""
            local t = {}
            for i = 1, 300000 do t[i] = i end
            log.info("big", { rows = t })
            """#, 0, nil),
        ("abandoned-hub-lists", #"""
            for i = 1, 1500 do for u in hub.users.list{} do break end end
            """#, 0, nil),
        ("progress-bars-in-a-loop", #"""
            local label = string.rep("x", 4000)
            for n = 1, 25000 do progress(1, label .. n) end
            """#, 0, nil),
        // Text that grows when it is encoded or escaped for display counts against the cap too.
        ("json-encode-control-characters", #"local s = json.encode(string.rep("\1", 12 * 2^20))"#, 4, memoryMessage),
        ("export-jsonl-control-characters", #"export.jsonl("a.jsonl", { { a = string.rep("\1", 12 * 2^20) } })"#, 4, memoryMessage),
        ("export-csv-quotes", #"export.csv("a.csv", { { a = string.rep('"', 12 * 2^20) } })"#, 4, memoryMessage),
        ("log-huge-message", #"log.info(string.rep("\1", 12 * 2^20))"#, 0, nil),
        ("log-huge-field", #"log.info("x", { a = string.rep("\1", 12 * 2^20) })"#, 0, nil),
        ("error-object-huge-message", #"error({ message = string.rep("\1", 12 * 2^20) })"#, 1, nil),
        ("error-object-huge-field", #"error({ blob = string.rep("\1", 12 * 2^20) })"#, 1,
         "error: error object: a table too large to show (over 1 MiB)"),
        // The message, its position and its traceback are three copies in Lua: 36 MiB.
        ("error-huge-string", #"error(string.rep("\1", 12 * 2^20))"#, 4, memoryMessage),
        ("error-large-string", #"error(string.rep("\1", 6 * 2^20))"#, 1, nil),
        ("export-rows", #"""
            local rows = {}
            for i = 1, 40000 do rows[i] = { id = "row" .. i, n = i, name = "some name here " .. i } end
            export.jsonl("big.jsonl", rows)
            export.csv("big.csv", rows)
            """#, 0, nil),
    ]

    func testPeakMemoryStaysWithinTwiceTheCapPlusBaseline() throws {
        let cli = try CLIHarness(testCase: self)
        let baseline = try runMeasured(cli, "baseline", "print('hello')")
        XCTAssertEqual(baseline.status, 0, baseline.stderr)
        let allowed = baseline.peak + 2 * Self.capMiB << 20
        for recipe in Self.hostileRecipes {
            let outcome = try runMeasured(cli, recipe.name, recipe.source)
            XCTAssertEqual(outcome.status, recipe.status, "\(recipe.name): \(outcome.stderr)")
            if let line = recipe.errorLine {
                // The error line; a run that stopped with an export open then says what it kept.
                let lines = outcome.stderr.split(separator: "\n").map(String.init)
                let errorLine = lines.last { $0.hasPrefix("error: ") }
                XCTAssertEqual(errorLine, line, "\(recipe.name): \(outcome.stderr)")
            }
            XCTAssertLessThanOrEqual(outcome.peak, allowed,
                "\(recipe.name): peak RSS \(outcome.peak >> 20) MiB, over 2 × \(Self.capMiB) MiB + baseline \(baseline.peak >> 20) MiB")
        }
    }
}
