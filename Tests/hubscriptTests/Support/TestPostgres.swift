import Foundation
import PostgresKit
import XCTest

/// The PostgreSQL test server `scripts/test` starts (`HUBSCRIPT_TEST_POSTGRES`,
/// scripts/lib/postgres.sh): skipped without it on a developer's machine, a failure
/// under `CI`, so the shared journal is never silently untested there.
enum TestPostgres {
    struct Missing: Error, CustomStringConvertible {
        var description: String {
            "HUBSCRIPT_TEST_POSTGRES is not set under CI: run the tests with scripts/test, which starts a PostgreSQL server"
        }
    }

    static func baseURL() throws -> String {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["HUBSCRIPT_TEST_POSTGRES"], !url.isEmpty { return url }
        if let ci = environment["CI"], !ci.isEmpty { throw Missing() }
        throw XCTSkip("HUBSCRIPT_TEST_POSTGRES is not set (scripts/test starts a PostgreSQL server and sets it)")
    }

    /// The socket folder of the test server (`host=` of its URL).
    static func socketFolder() throws -> String {
        let base = try baseURL()
        guard let range = base.range(of: "host=") else { throw XCTSkip("the test URL has no host=") }
        return String(base[range.upperBound...].prefix { $0 != "&" })
    }

    /// A URL whose journal is a new, empty schema of the test server.
    static func freshSchemaURL() throws -> String {
        let base = try baseURL()
        let schema = "c_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        let admin = try PostgresConnection(url: try PostgresURL(base))
        try admin.exec("CREATE SCHEMA \(schema)")
        admin.close()
        return base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
    }

    /// A server of the test's own in a new folder (scripts/lib/postgres.sh), for tests
    /// that stop and restart it. Its URL: `postgresql:///hubscript?host=FOLDER&user=hubscript`.
    final class OwnServer {
        let folder: String
        var url: String { "postgresql:///hubscript?host=\(folder)&user=hubscript" }

        init() throws {
            _ = try TestPostgres.baseURL()   // the same rule: skip, or fail under CI
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
