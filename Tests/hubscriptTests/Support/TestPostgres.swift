import Foundation
import PostgresKit
import TestSupport
import XCTest

extension TestPostgres {
    /// A server of the test's own in a new folder (scripts/lib/postgres.sh), for tests
    /// that stop and restart it. Its URL: `postgresql:///hubscript?host=FOLDER&user=hubscript`.
    final class OwnServer {
        let folder: String
        var url: String { "postgresql:///hubscript?host=\(folder)&user=hubscript" }

        init() throws {
            _ = try TestPostgres.requiredBaseURL()   // the same rule: skip, or fail under CI
            folder = "/tmp/hs-pg-" + UUID().uuidString.prefix(8).lowercased()
            try script("start")
        }

        func script(_ action: String) throws {
            let p = Process()
            p.executableURL = URL(fileURLWithPath: "/bin/bash")
            p.arguments = [CLIHarness.repoRoot.appendingPathComponent("scripts/lib/postgres.sh").path, action, folder]
            p.standardInput = FileHandle.nullDevice
            p.standardOutput = FileHandle.nullDevice
            try p.run()
            p.waitUntilExit()
            guard p.terminationStatus == 0 else {
                throw NSError(domain: "TestPostgres", code: Int(p.terminationStatus),
                              userInfo: [NSLocalizedDescriptionKey: "scripts/lib/postgres.sh \(action) \(folder) failed"])
            }
        }

        func stop() throws { try script("stop") }
        func start() throws { try script("start") }

        deinit {
            try? script("stop")
            try? FileManager.default.removeItem(atPath: folder)
        }
    }
}
