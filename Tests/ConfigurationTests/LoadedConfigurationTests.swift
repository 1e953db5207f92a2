import Foundation
import HubClient
import ScriptHost
import RunJournal
import XCTest
import Configuration

/// Counts how often a configuration is evaluated (the real evaluator, counted).
final class EvaluationCounter: @unchecked Sendable {
    private let lock = NSLock()
    private var evaluations = 0

    var count: Int { lock.withLock { evaluations } }

    var evaluator: ConfigEvaluator {
        ConfigEvaluator { data, path in
            self.lock.withLock { self.evaluations += 1 }
            return try ConfigEvaluator.lua.evaluate(data, path)
        }
    }
}

/// The configuration is read, evaluated and validated once into one value, and every
/// part of hubscript takes its part from that value: a file changed afterwards changes
/// nothing a command already loaded.
final class LoadedConfigurationTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-loaded-config-\(UUID().uuidString)")
        for sub in ["recipes", "ops", "other", "state"] {
            try FileManager.default.createDirectory(at: folder.appendingPathComponent(sub), withIntermediateDirectories: true)
        }
        try #"recipe { name = "r", params = { event = { type = "table" } } }"#.write(
            to: folder.appendingPathComponent("recipes/r.lua"), atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    @discardableResult
    func write(_ text: String) throws -> String {
        let url = folder.appendingPathComponent("config.lua")
        try Data(text.utf8).write(to: url)
        XCTAssertEqual(chmod(url.path, 0o600), 0)
        return url.path
    }

    static let everyPart = """
        return {
          default_profile = "prod",
          profiles = { prod = { sandbox = true } },
          dispatch_targets = { ops = { url = "https://dispatch.example.com", token_ref = "dispatch/ops" } },
          libraries = { ops = "ops" },
          journal = "postgresql://hubscript@db.internal/hubscript",
          jobs = { nightly = { recipe = "recipes/r.lua", schedule = "@daily" } },
          triggers = { off = { on = { "user.suspended" }, recipe = "recipes/r.lua", secret = "webhooks/hub" } },
        }
        """

    func testOneEvaluationGivesEveryPart() throws {
        let path = try write(Self.everyPart)
        let evaluations = EvaluationCounter()
        let config = try LoadedConfiguration.load(explicit: path, evaluator: evaluations.evaluator)
        XCTAssertEqual(evaluations.count, 1)
        XCTAssertEqual(config.file?.path, path)
        XCTAssertEqual(config.hub.defaultProfile, "prod")
        XCTAssertEqual(config.hub.dispatchTargets["ops"]?.tokenRef, "dispatch/ops")
        XCTAssertEqual(config.jobs.jobs.map(\.name), ["nightly"])
        XCTAssertEqual(config.triggers.triggers.map(\.name), ["off"])
        XCTAssertEqual(config.libraryNames, ["ops"])
        XCTAssertEqual(config.journal?.text, "postgresql://hubscript@db.internal/hubscript")
    }

    /// What a command resolves after its start (the journal's location, the libraries'
    /// folders, the unpinned libraries of `trust`) comes from the value, not from the
    /// file as it is now: a file rewritten, or broken, after the load changes nothing.
    func testTheValueIsNotTheFileAsItIsNow() throws {
        let path = try write(Self.everyPart)
        let state = StateDirectory(explicit: folder.appendingPathComponent("state").path)
        let config = try LoadedConfiguration.load(explicit: path)
        for later in ["return { libraries = { ops = \"other\" } }", "return {", "return { journal = 1 }"] {
            try write(later)
            XCTAssertEqual(try config.journalLocation(state: state),
                           .postgres(try XCTUnwrap(config.journal)), later)
            XCTAssertEqual(try config.libraries(state: state).map(\.folder.lastPathComponent), ["ops"], later)
            XCTAssertEqual(try config.unpinnedLibraries(state: state)?.libraries.map(\.folder.lastPathComponent), ["ops"], later)
            XCTAssertEqual(config.hub.defaultProfile, "prod", later)
        }
    }

    func testWithoutAFileThereIsNothingAndTheJournalIsTheStateDirectorysSQLiteFile() throws {
        let evaluations = EvaluationCounter()
        let config = try LoadedConfiguration.load(explicit: nil, environment: ["HOME": folder.path],
                                                  currentDirectory: folder.path, evaluator: evaluations.evaluator)
        XCTAssertEqual(evaluations.count, 0)
        XCTAssertNil(config.file)
        XCTAssertTrue(config.hub.profiles.isEmpty)
        XCTAssertTrue(config.jobs.jobs.isEmpty)
        XCTAssertTrue(config.triggers.triggers.isEmpty)
        let state = StateDirectory(explicit: folder.appendingPathComponent("state").path)
        XCTAssertEqual(try config.journalLocation(state: state), .sqlite(path: try state.journalFilePath))
        XCTAssertEqual(try config.libraries(state: state).count, 0)
        XCTAssertNil(try config.unpinnedLibraries(state: state))
    }

    /// A mistake in any part stops the load, whatever the command will use: none is
    /// skipped because a command does not need that part.
    func testAMistakeInAnyPartStopsTheLoad() throws {
        let cases: [(String, String)] = [
            (#"libraries = { Ops = "ops" }"#,
             #"libraries: 'Ops' is not a library name (lowercase letters, digits and _, as in require("Ops.module"))"#),
            ("libraries = { ops = 3 }", "libraries.ops must be a folder path or git+URL@COMMIT (a string)"),
            (#"libraries = { sec = "git+file:///srv/sec.git" }"#,
             "libraries.sec: git+file:///srv/sec.git names no commit: pin it as git+file:///srv/sec.git@COMMIT, the full commit id (git rev-parse HEAD in the repository shows it)"),
            ("journal = 5", #"journal must be a PostgreSQL URL such as "postgresql://user@host/database" (leave it out to keep the SQLite journal in the state directory)"#),
            (#"jobs = { j = { recipe = "recipes/none.lua", schedule = "@daily" } }"#,
             #"job "j": recipe "recipes/none.lua" is not a file (looked for \#(folder.path)/recipes/none.lua; a recipe path is relative to the config file's folder)"#),
            (#"triggers = { t = { on = { "user.suspended" }, recipe = "recipes/r.lua" } }"#,
             #"trigger "t": secret (the vault entry holding the webhook's signing secret, e.g. "webhooks/hub") is required"#),
        ]
        for (part, message) in cases {
            let path = try write("return { \(part) }")
            XCTAssertThrowsError(try LoadedConfiguration.load(explicit: path), part) { error in
                XCTAssertEqual("\(error)", "config \(path): \(message)", part)
            }
        }
    }

    /// A library's folder is found when a command needs the libraries: a missing one
    /// is an error then, naming the folder.
    func testAMissingLibraryFolderIsAnErrorWhenTheLibrariesAreNeeded() throws {
        let path = try write(#"return { libraries = { gone = "gone" } }"#)
        let config = try LoadedConfiguration.load(explicit: path)
        let state = StateDirectory(explicit: folder.appendingPathComponent("state").path)
        XCTAssertThrowsError(try config.libraries(state: state)) { error in
            XCTAssertEqual("\(error)", "config \(path): libraries.gone: no such folder \(folder.path)/gone")
        }
        XCTAssertThrowsError(try config.unpinnedLibraries(state: state)) { error in
            XCTAssertEqual("\(error)", "config \(path): libraries.gone: no such folder \(folder.path)/gone")
        }
    }
}
