import XCTest
@testable import SystemText

/// Pieces of a secret in a short text quoting a server: each run of twelve or more of its
/// characters becomes one mask; shorter runs and other text stay.
final class SecretPiecesTests: XCTestCase {
    static let secret = "dsp_live_Pieces0123456789abcdef"

    func testEachRunOfTwelveOrMoreCharactersBecomesOneMask() {
        func masked(_ text: String) -> String { SecretPieces.masked(text, secret: Self.secret, mask: "#") }
        XCTAssertEqual(masked("status: Bearer dsp_live_Pieces0123456789abcdef!"), "status: Bearer #!")
        XCTAssertEqual(masked("cut: Bearer dsp_live_Pie"), "cut: Bearer #")           // a prefix of 12
        XCTAssertEqual(masked("cut: Bearer dsp_live_Pi"), "cut: Bearer dsp_live_Pi")   // 11: left
        XCTAssertEqual(masked("tail 3456789abcdef, head dsp_live_Piec."), "tail #, head #.")
        XCTAssertEqual(masked("twice dsp_live_Pieces01dsp_live_Pieces01"), "twice #")  // runs that touch: one mask
        XCTAssertEqual(masked("the machine token from $X"), "the machine token from $X")
        XCTAssertEqual(SecretPieces.masked("short secret abcdefghijk", secret: "abcdefghijk", mask: "#"), "short secret abcdefghijk")
    }
}
