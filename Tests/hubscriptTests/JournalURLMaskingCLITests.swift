import Foundation
import XCTest

/// A journal URL whose password holds an unencoded `@` or `/`, is given by a
/// percent-encoded parameter name (`pass%77ord=`), or is a key's `sslpassword=`: no
/// piece of it shows in any message or `--json` event of the commands that open the
/// journal, whatever libpq says.
final class JournalURLMaskingCLITests: XCTestCase {
    func testNoPieceOfAJournalPasswordShowsInMessagesOrJSON() throws {
        let cli = try CLIHarness(testCase: self)
        let empty = cli.root.appendingPathComponent("no-server").path
        try FileManager.default.createDirectory(atPath: empty, withIntermediateDirectories: true)
        let recipe = try cli.file("recipes/notify.lua", JobsCLITests.notify)
        let cases: [(url: String, pieces: [String])] = [
            ("postgresql://ops:Kq3first@Wz8second@/hubscript?host=\(empty)", ["Kq3first", "Wz8second"]),
            ("postgresql://ops:Kq3first/Wz8second@db.invalid/hubscript?connect_timeout=1", ["Kq3first", "Wz8second"]),
            ("postgresql://ops@/hubscript?host=\(empty)&pass%77ord=Kq3encoded", ["Kq3encoded"]),
            ("postgresql://ops@/hubscript?host=\(empty)&sslpassword=Kq3keypass&sslmode=disable", ["Kq3keypass"]),
            ("postgresql://ops@/hubscript?host=\(empty)&password=Kq3pw&password=Wz8pw", ["Kq3pw", "Wz8pw"]),
        ]
        for (url, pieces) in cases {
            let config = try cli.file("bad.config.lua", #"return { profiles = { dev = { sandbox = true } }, journal = "\#(url)" }"#)
            for args in [["runs", "list"], ["runs", "list", "--json"], [recipe, "--profile", "dev"], [recipe, "--profile", "dev", "--json"]] {
                let r = try cli.run(args + ["--config", config])
                XCTAssertEqual(r.status, 2, "\(url) \(args): \(r.output)")
                XCTAssertTrue(r.output.contains("***"), "\(url) \(args): \(r.output)")
                for piece in pieces {
                    XCTAssertFalse(r.output.contains(piece), "\(piece) shows for \(url) \(args): \(r.output)")
                }
            }
        }
    }
}
