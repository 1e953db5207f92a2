import Foundation
import XCTest

/// A value a session shows is copied out of the Lua state (whose memory the session's
/// limit counts) into JSON text (which it does not, and which escapes can make six
/// times larger): past 250,000 table entries (nested ones counted) or 16 MiB of text it
/// is refused with what to do instead, and a smaller one is shown whole.
final class ReplShownValueBoundCLITests: XCTestCase {
    static func refusal(_ n: Int) -> String {
        "error: cannot show value \(n): it is over 250000 table entries or 16 MiB of text, more than is shown; show a part of it (#t, t[1], a for loop), or export it\n"
    }

    func testAValueOverTheBoundIsRefusedAndTheSessionGoesOn() throws {
        let cli = try CLIHarness(testCase: self)
        let input = """
            t = {} for i = 1, 250001 do t[i] = i end
            t
            t[250001] = nil
            #t, #json.encode(t)
            nested = { {}, {} } for i = 1, 125000 do nested[1][i] = i nested[2][i] = i end
            1, nested
            text = string.rep("\\1", 9 << 20)
            { text, text }
            { [text] = text }
            #text

            """
        let r = try cli.run(["repl", "--quiet"], input: input)
        XCTAssertEqual(r.status, 0, String(r.output.prefix(3000)))
        XCTAssertEqual(r.stdout, "250000\n1638896\n1\n\(9 << 20)\n")
        XCTAssertEqual(r.stderrWithoutRunStart, Self.refusal(1) + Self.refusal(2) + Self.refusal(1) + Self.refusal(1))
    }

    func testEvalOfAValueOverTheBoundFailsAndShowsWhatCameBefore() throws {
        let cli = try CLIHarness(testCase: self)
        let r = try cli.run(["eval", #"local s = string.rep("\1", 60 << 20) return 1, s"#])
        XCTAssertEqual(r.status, 1, String(r.output.prefix(3000)))
        XCTAssertEqual(r.stdout, "1\n")
        XCTAssertTrue(r.stderr.hasPrefix(Self.refusal(2)), r.stderr)
        let under = try cli.run(["eval", #"#json.encode(string.rep("\1", 1 << 20))"#])
        XCTAssertEqual(under.stdout, "\(6 * (1 << 20) + 2)\n")
    }
}
