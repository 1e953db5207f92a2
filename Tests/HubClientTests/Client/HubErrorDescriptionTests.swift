import XCTest
@testable import HubClient

/// `HubError.description` is one line whatever the Hub sends: its code and message show
/// their line breaks as `\n` and `\r`; `message` keeps the Hub's text.
final class HubErrorDescriptionTests: XCTestCase {
    func testTheHubsLineBreaksShowEscapedInTheDescription() {
        let error = HubError(code: "odd\nx", message: "a\r\nok: forged\rb", status: 409, requestID: "r1", hint: "Fix it.")
        XCTAssertEqual(error.description, #"odd\nx: a\r\nok: forged\rb (HTTP 409) [request r1]. Fix it."#)
        XCTAssertEqual(error.message, "a\r\nok: forged\rb")
    }

    func testADescriptionWithoutLineBreaksIsUnchanged() {
        XCTAssertEqual(HubError(code: "not_found", message: "no such user", status: 404, hint: "Check the id.").description,
                       "not_found: no such user (HTTP 404). Check the id.")
    }
}
