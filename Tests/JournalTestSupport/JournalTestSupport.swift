import Foundation
@testable import RunJournal

/// A journal test's fixed clock, folders and runs.
public enum Fixture {
    public static let start = Date(timeIntervalSince1970: 1_796_048_553)  // 2026-11-30T14:22:33Z

    public static func journal() throws -> Journal { try Journal.inMemory(clock: { start }) }

    public static func tempDirectory() throws -> URL {
        let url = FileManager.default.temporaryDirectory
            .appendingPathComponent("hubscript-journal-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        return url
    }

    public static func runStart(_ id: String = "run_test", mode: RunMode = .run) -> RunStart {
        RunStart(id: id, recipePath: "recipes/offboard.lua", recipeSHA256: String(repeating: "ab", count: 32),
                 paramsJSON: #"{"user":"usr_ada"}"#, profile: "default", mode: mode)
    }
}
