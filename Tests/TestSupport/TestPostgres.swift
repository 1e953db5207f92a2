import Foundation
import PostgresKit
import XCTest

/// The PostgreSQL test server `scripts/test` starts and names in `HUBSCRIPT_TEST_POSTGRES`
/// (scripts/lib/postgres.sh), for every test target that needs one. Without it a
/// developer's run skips those tests (saying so), but under `CI` its absence fails them:
/// the PostgreSQL side can never silently go untested there.
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
        print("note: HUBSCRIPT_TEST_POSTGRES is not set: PostgreSQL is not tested (scripts/test sets it)")
        if required { throw XCTSkip("HUBSCRIPT_TEST_POSTGRES is not set (scripts/test starts a server and sets it)") }
        return nil
    }

    /// The server's URL, or `XCTSkip` (an error under `CI`) when none is configured.
    public static func requiredBaseURL() throws -> String {
        guard let url = try baseURL(required: true) else { throw XCTSkip("no PostgreSQL test server") }
        return url
    }

    /// The socket folder of the test server (`host=` of its URL).
    public static func socketFolder() throws -> String {
        let base = try requiredBaseURL()
        guard let range = base.range(of: "host=") else { throw XCTSkip("the test URL has no host=") }
        return String(base[range.upperBound...].prefix { $0 != "&" })
    }

    /// A new, empty schema on the server at `base` (so no test sees another's rows, nor
    /// its run locks), and the URL that makes it the connection's (`options=-csearch_path=…`).
    public static func freshSchemaURL(_ base: String) throws -> String {
        let schema = "t_" + UUID().uuidString.replacingOccurrences(of: "-", with: "").lowercased().prefix(20)
        let admin = try PostgresConnection(url: try PostgresURL(base))
        defer { admin.close() }
        try admin.exec("CREATE SCHEMA \(schema)")
        return base + (base.contains("?") ? "&" : "?") + "options=-csearch_path%3D\(schema)"
    }

    /// A new, empty schema on the test server (`requiredBaseURL`), as a URL.
    public static func freshSchemaURL() throws -> String { try freshSchemaURL(requiredBaseURL()) }

    /// `freshSchemaURL(base)`, parsed.
    public static func freshSchema(_ base: String) throws -> PostgresURL { try PostgresURL(freshSchemaURL(base)) }
}
