import Foundation
import PostgresKit
import XCTest

/// The test server of `HUBSCRIPT_TEST_POSTGRES`.
public enum TestPostgres {
    public struct Missing: Error, CustomStringConvertible {
        public var description: String {
            "HUBSCRIPT_TEST_POSTGRES is not set under CI: run the tests with scripts/test, which starts a PostgreSQL server"
        }
    }

    /// The server's URL; nil (or `XCTSkip` when `required`) when none is configured on
    /// a developer's machine; an error under `CI`.
    public static func baseURL(required: Bool = true) throws -> String? {
        let environment = ProcessInfo.processInfo.environment
        if let url = environment["HUBSCRIPT_TEST_POSTGRES"], !url.isEmpty { return url }
        if let ci = environment["CI"], !ci.isEmpty { throw Missing() }
        print("note: HUBSCRIPT_TEST_POSTGRES is not set: the PostgreSQL journal is not tested (scripts/test sets it)")
        if required { throw XCTSkip("HUBSCRIPT_TEST_POSTGRES is not set (scripts/test starts a server and sets it)") }
        return nil
    }

    /// The server's URL, or `XCTSkip` (an error under `CI`) when none is configured.
    public static func requiredBaseURL() throws -> String {
        guard let url = try baseURL(required: true) else { throw XCTSkip("no PostgreSQL test server") }
        return url
    }

    /// A new schema on the server (so no test sees another's rows, nor its run locks),
    /// and the URL that makes it the journal's (`options=-csearch_path=…`).
    public static func freshSchema(_ base: String) throws -> PostgresURL {
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        let admin = try PostgresConnection(url: try PostgresURL(base))
        try admin.exec("CREATE SCHEMA \(schema)")
        admin.close()
        return try PostgresURL(base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)")
    }
}
