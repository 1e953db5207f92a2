import XCTest
import SystemText

/// When text for people is painted: `--color` first, then `NO_COLOR` and `TERM=dumb`,
/// then whether the stream is a terminal.
final class TerminalStyleTests: XCTestCase {
    override func tearDown() {
        TerminalStyle.choose(.auto)
        super.tearDown()
    }

    func testAlwaysAndNeverWinOverTheEnvironment() {
        TerminalStyle.choose(.always)
        XCTAssertTrue(TerminalStyle.isColoured(.stderr, environment: ["NO_COLOR": "1", "TERM": "dumb"]))
        XCTAssertEqual(TerminalStyle.paint("error:", .error, on: .stderr), "\u{1B}[1;31merror:\u{1B}[0m")
        XCTAssertEqual(TerminalStyle.paint("", .error, on: .stderr), "", "nothing to paint, no codes")
        TerminalStyle.choose(.never)
        XCTAssertFalse(TerminalStyle.isColoured(.stdout, environment: [:]))
        XCTAssertEqual(TerminalStyle.paint("FAIL", .failure, on: .stdout), "FAIL")
    }

    func testAutoIsOffWithNoColorOrADumbTerminalAndOtherwiseFollowsTheStream() {
        TerminalStyle.choose(.auto)
        XCTAssertFalse(TerminalStyle.isColoured(.stderr, environment: ["NO_COLOR": "1"]))
        XCTAssertFalse(TerminalStyle.isColoured(.stderr, environment: ["NO_COLOR": "0"]), "any non-empty value")
        XCTAssertFalse(TerminalStyle.isColoured(.stdout, environment: ["TERM": "dumb"]))
        // An empty NO_COLOR is unset: the stream decides.
        XCTAssertEqual(TerminalStyle.isColoured(.stdout, environment: ["NO_COLOR": ""]), isatty(1) == 1)
        XCTAssertEqual(TerminalStyle.isColoured(.stderr, environment: [:]), isatty(2) == 1)
    }

    func testEachRoleHasItsSequence() {
        XCTAssertEqual(TerminalStyle.Role.allCases.map(\.start), [
            "\u{1B}[1;31m", "\u{1B}[33m", "\u{1B}[1;31m", "\u{1B}[32m", "\u{1B}[1m", "\u{1B}[32m", "\u{1B}[33m", "\u{1B}[31m",
        ])
        XCTAssertEqual(["POST", "put", "PATCH", "DELETE", "GET"].map { TerminalStyle.role(ofMethod: $0) },
                       [.adds, .changes, .changes, .removes, nil])
    }
}
