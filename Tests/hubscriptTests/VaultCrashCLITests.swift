import Foundation
import Vault
import XCTest

/// A `vault` process killed with SIGKILL at any point of a write leaves a vault that
/// opens, authenticates every entry, and holds the old value or the new one — never a
/// mix. Two ways: at each named checkpoint (`HUBSCRIPT_VAULT_TEST_KILL_AT` makes a
/// debug build kill itself there: those tests spawn the debug build beside the tests),
/// and at random moments from outside (the binary under test, the release one in CI).
final class VaultCrashCLITests: XCTestCase {
    var cli: VaultCLI!
    var key: [String] { ["--key-file", cli.keyFile] }

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try VaultCLI(testCase: self)
        try cli.initialise()
        XCTAssertEqual(try cli.run(["set", "db/password"] + key, stdin: "old").status, 0)
    }

    func killedAt(_ point: String, _ args: [String], stdin: String? = nil, file: StaticString = #filePath, line: UInt = #line) throws {
        let r = try cli.run(args + key, stdin: stdin, environment: ["HUBSCRIPT_VAULT_TEST_KILL_AT": point], debugBuild: true)
        XCTAssertTrue(r.signalled && r.status == SIGKILL,
                      "\(point): not killed (\(r.status); only a debug build has the kill points): \(r.stderr)", file: file, line: line)
    }

    /// The vault opens and every entry and object authenticates.
    func assertIntact(_ context: String, file: StaticString = #filePath, line: UInt = #line) throws {
        XCTAssertNoThrow(try cli.open().verify(), context, file: file, line: line)
        let r = try cli.run(["verify"] + key)
        XCTAssertEqual(r.status, 0, "\(context): \(r.stderr)", file: file, line: line)
    }

    static let indexPoints = ["index.temp-created", "index.temp-partial", "index.temp-written", "index.temp-synced",
                              "index.renamed", "index.folder-synced"]

    func testSetKilledAtEachPointLeavesTheOldValueBeforeTheRenameAndTheNewOneAfter() throws {
        for point in Self.indexPoints {
            try killedAt(point, ["set", "db/password"], stdin: "new \(point)")
            try assertIntact(point)
            let expected = point.hasSuffix("renamed") || point.hasSuffix("folder-synced") ? "new \(point)" : try previous(point)
            XCTAssertEqual(try cli.value("db/password"), expected, point)
            // A later write goes through (and removes what the killed one left).
            XCTAssertEqual(try cli.run(["set", "db/password"] + key, stdin: "after \(point)").status, 0)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: cli.folder.path).sorted(), ["objects", "vault.hsv", "vault.lock"])
        }
    }

    static let generationPoints = ["generation.temp-created", "generation.temp-partial", "generation.temp-written",
                                   "generation.temp-synced", "generation.renamed", "generation.folder-synced"]

    /// The generation this machine remembers is raised after the vault file is durable:
    /// a kill at any point of a write never leaves a vault that reports a rollback.
    func testAWriteKilledAtAnyPointNeverLeavesAFalseRollback() throws {
        for point in Self.indexPoints + Self.generationPoints {
            try killedAt(point, ["set", "db/password"], stdin: "new \(point)")
            try assertIntact(point)
            let expected = point.hasPrefix("generation.") || point.hasSuffix("renamed") || point.hasSuffix("folder-synced")
            XCTAssertEqual(try cli.value("db/password"), expected ? "new \(point)" : "old", point)
            XCTAssertEqual(try cli.run(["set", "db/password"] + key, stdin: "old").status, 0, point)
            let memory = cli.harness.stateDir.appendingPathComponent("vault-generations")
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: memory.path).sorted(), [".lock", try cli.open().id], point)
        }
    }

    /// The value before the kill at `point`: the one written after the previous point.
    func previous(_ point: String) throws -> String {
        guard let k = Self.indexPoints.firstIndex(of: point), k > 0 else { return "old" }
        return "after \(Self.indexPoints[k - 1])"
    }

    func testPutObjectKilledAtEachPointLeavesNoObjectOrAWholeOne() throws {
        let input = cli.harness.root.appendingPathComponent("big.bin")
        let data = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 13) })
        try data.write(to: input)
        let points = ["object.temp-created", "object.temp-partial", "object.temp-synced", "object.renamed", "object.folder-synced"]
            + Self.indexPoints
        for point in points {
            try killedAt(point, ["put-object", input.path, "--name", "big"])
            try assertIntact(point)
            let stored = try cli.open().list().contains { $0.name == "big" }
            XCTAssertEqual(stored, point == "index.renamed" || point == "index.folder-synced", point)
            if stored {
                let out = cli.harness.root.appendingPathComponent("out-\(point)").path
                XCTAssertEqual(try cli.run(["get-object", "big", "--out", out] + key).status, 0)
                XCTAssertEqual(try Data(contentsOf: URL(fileURLWithPath: out)), data, point)
                XCTAssertEqual(try cli.run(["rm", "big"] + key).status, 0)
            }
        }
    }

    func testGetObjectKilledAtEachPointLeavesTheOldOutputOrTheWholeNewOne() throws {
        let input = cli.harness.root.appendingPathComponent("big.bin")
        let data = Data((0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 17) })
        try data.write(to: input)
        XCTAssertEqual(try cli.run(["put-object", input.path, "--name", "big"] + key).status, 0)
        let folder = cli.harness.root.appendingPathComponent("outputs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        let out = folder.appendingPathComponent("big.out").path
        for point in ["output.temp-created", "output.temp-partial", "output.temp-written", "output.temp-synced",
                      "output.renamed", "output.folder-synced"] {
            try Data("old".utf8).write(to: URL(fileURLWithPath: out))
            try killedAt(point, ["get-object", "big", "--out", out])
            let now = try Data(contentsOf: URL(fileURLWithPath: out))
            XCTAssertEqual(now, point == "output.renamed" || point == "output.folder-synced" ? data : Data("old".utf8), point)
            XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: folder.path), ["big.out"], "\(point): a partial file was left")
        }
    }

    func testSetKilledAtRandomMomentsAlwaysLeavesTheOldOrTheNewValue() throws {
        var generator = SystemRandomNumberGenerator()
        var current = "old"
        var outcomes: [String: Int] = [:]
        for trial in 0..<40 {
            let value = "value-\(trial)"
            let (process, finish) = try cli.start(["set", "db/password"] + key, stdin: value)
            usleep(UInt32.random(in: 0...25_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            let r = try finish()
            outcomes[r.signalled ? "killed" : "finished", default: 0] += 1
            try assertIntact("trial \(trial)")
            let stored = try cli.value("db/password")
            XCTAssertTrue(stored == current || stored == value, "trial \(trial): \(stored), expected \(current) or \(value)")
            current = stored
        }
        XCTAssertGreaterThan(outcomes["killed"] ?? 0, 0, "\(outcomes)")
    }

    func testPutObjectKilledAtRandomMomentsLeavesAVaultThatOpens() throws {
        let input = cli.harness.root.appendingPathComponent("big.bin")
        try Data((0..<4_000_000).map { UInt8(truncatingIfNeeded: $0 &* 29) }).write(to: input)
        var generator = SystemRandomNumberGenerator()
        for trial in 0..<12 {
            let (process, finish) = try cli.start(["put-object", input.path, "--name", "big"] + key)
            usleep(UInt32.random(in: 0...60_000, using: &generator))
            kill(process.processIdentifier, SIGKILL)
            _ = try finish()
            try assertIntact("trial \(trial)")
        }
    }
}
