import Foundation
import XCTest
@testable import PostgresKit

/// Passwords are masked by what libpq reads, not by what the URL seems to say: an
/// unencoded `@` in the user info (libpq stops at the first `@` and reads the rest as
/// the host), a parameter name written with percent-escapes (`pass%77ord=`), and
/// `sslpassword=`. No message built from libpq's own text shows any piece of them.
final class PostgresURLMaskingTests: XCTestCase {
    func testAnUnencodedAtInThePasswordIsMaskedWhole() throws {
        let url = try PostgresURL("postgresql://ops:p4ss@w0rd@db.internal:5433/hub?sslmode=disable")
        XCTAssertEqual(url.redacted, "postgresql://ops:***@db.internal:5433/hub?sslmode=disable")
        XCTAssertEqual(url.password, "p4ss", "libpq reads up to the first @")
        // libpq names "w0rd@db.internal" as the host; neither piece shows.
        XCTAssertEqual(url.redact(#"could not translate host name "w0rd@db.internal" to address"#),
                       #"could not translate host name "***@db.internal" to address"#)
        XCTAssertEqual(url.redact("p4ss@w0rd and p4ss"), "*** and ***")
    }

    func testSeveralAtsAndASlashInThePasswordAreMasked() throws {
        let at = try PostgresURL("postgresql://ops:a@b@c@db/hub")
        XCTAssertEqual(at.redacted, "postgresql://ops:***@db/hub")
        XCTAssertFalse(at.redact("host b@c@db, password a").contains("b@c"))
        let slash = try PostgresURL("postgresql://ops:pa/ss@db/hub")
        XCTAssertEqual(slash.redacted, "postgresql://ops:***@db/hub")
        XCTAssertEqual(slash.redact(#"invalid port number: "pa""#), #"invalid port number: "***""#)
        XCTAssertEqual(slash.redact(#"database "ss@db/hub" does not exist"#), #"database "***@db/hub" does not exist"#)
        let question = try PostgresURL("postgresql://ops:pa?ss@db/hub")
        XCTAssertEqual(question.redacted, "postgresql://ops:***@db/hub")
        XCTAssertEqual(question.password, "pa?ss")
    }

    func testAPercentEncodedParameterNameIsReadAsLibpqReadsIt() throws {
        let url = try PostgresURL("postgresql://ops@db/hub?pass%77ord=hunter2&application_name=x")
        XCTAssertEqual(url.redacted, "postgresql://ops@db/hub?pass%77ord=***&application_name=x")
        XCTAssertEqual(url.redact("password hunter2"), "password ***")
        let encodedValue = try PostgresURL("postgresql://ops@db/hub?%70assword=a%26b%3Dc")
        XCTAssertEqual(encodedValue.redacted, "postgresql://ops@db/hub?%70assword=***")
        XCTAssertEqual(encodedValue.redact("a&b=c and a%26b%3Dc"), "*** and ***")
    }

    func testSSLPasswordIsMaskedToo() throws {
        let url = try PostgresURL("postgresql://ops:pw1@db/hub?sslkey=/k.pem&sslpassword=keypass9&sslmode=require")
        XCTAssertEqual(url.redacted, "postgresql://ops:***@db/hub?sslkey=/k.pem&sslpassword=***&sslmode=require")
        XCTAssertEqual(url.redact("keypass9 pw1"), "*** ***")
        let encoded = try PostgresURL("postgresql://db/hub?ssl%70assword=keypass9")
        XCTAssertEqual(encoded.redacted, "postgresql://db/hub?ssl%70assword=***")
    }

    /// What libpq itself parses from the URL is masked, whatever form it had.
    func testTheValuesLibpqParsesAreMasked() throws {
        let url = try PostgresURL("postgresql://ops@db/hub?password=s%65cret1&sslpassword=k%65y2")
        XCTAssertEqual(Set(url.libpqSecrets()), ["secret1", "key2"])
        XCTAssertEqual(url.redact("secret1 key2 s%65cret1"), "*** *** ***")
    }

    /// libpq's own messages, for URLs it refuses or cannot reach: no piece of any
    /// password in them.
    func testLibpqsMessagesNeverShowAPasswordPiece() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("no-pg-\(UUID().uuidString)").path
        let cases: [(url: String, pieces: [String])] = [
            ("postgresql://ops:Xq7pass@Yz9word@/hub?host=\(folder)&connect_timeout=2", ["Xq7pass", "Yz9word"]),
            ("postgresql://ops:Xq7pa/Yz9ss@db/hub?connect_timeout=2", ["Xq7pa", "Yz9ss"]),
            ("postgresql://ops@/hub?host=\(folder)&pass%77ord=Xq7secret&connect_timeout=2", ["Xq7secret"]),
            ("postgresql://ops@/hub?host=\(folder)&sslpassword=Xq7keypass&connect_timeout=2", ["Xq7keypass"]),
            ("postgresql://ops:Xq7pw%zz@/hub?host=\(folder)", ["Xq7pw"]),
            ("postgresql://ops@/hub?host=\(folder)&password=Xq7pw&bogus%zz=1", ["Xq7pw"]),
            ("postgresql://ops@/hub?host=\(folder)&password=Xq7pw&password=Yz9pw", ["Xq7pw", "Yz9pw"]),
        ]
        for (text, pieces) in cases {
            let url = try PostgresURL(text)
            XCTAssertThrowsError(try PostgresConnection(url: url), text) { error in
                let message = "\(error)"
                for piece in pieces { XCTAssertFalse(message.contains(piece), "\(piece) shows in: \(message)") }
                XCTAssertTrue(message.hasPrefix("cannot connect to postgresql://"), message)
            }
        }
    }
}
