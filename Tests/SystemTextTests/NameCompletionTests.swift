import SystemText
import XCTest

/// Tab completion at an interactive prompt: one dotted part at a time, the common
/// prefix of several names, the choices when nothing more is shared.
final class NameCompletionTests: XCTestCase {
    let completion = NameCompletion(names: [
        "hub", "hub.users.get", "hub.users.list", "hub.users.suspend", "hub.users.reactivate",
        "hub.sessions.list", "hub.sessions.revoke", "hub.sessions.revoke_all",
        "json", "json.encode", "json.decode", "print", "pairs", "pcall", ":help", ":quit", ":apply",
    ])

    func testAModuleNameCompletesToItsNextPart() {
        XCTAssertEqual(completion.complete("hub.u"), .insert("sers."))
        XCTAssertEqual(completion.complete("x = hub.users.ge"), .insert("t"))
        XCTAssertEqual(completion.complete("print(json.enc"), .insert("ode"))
    }

    func testSeveralNamesOfferTheirLastPart() {
        XCTAssertEqual(completion.complete("hub.users."), .choices(["get", "list", "reactivate", "suspend"]))
        XCTAssertEqual(completion.complete("hub."), .choices(["sessions.", "users."]))
        XCTAssertEqual(completion.complete("p"), .choices(["pairs", "pcall", "print"]))
    }

    func testACommonPrefixIsInsertedBeforeChoicesAreShown() {
        XCTAssertEqual(completion.complete("hub.sessions.rev"), .insert("oke"))
        XCTAssertEqual(completion.complete("hub.sessions.revoke"), .insert("_all"))
    }

    func testNothingToCompleteIsNone() {
        XCTAssertEqual(completion.complete(""), .none)
        XCTAssertEqual(completion.complete("local x = "), .none)
        XCTAssertEqual(completion.complete("zzz"), .none)
        XCTAssertEqual(completion.complete("hub.users.get"), .none)
    }

    func testCommandsCompleteOnlyAtTheStartOfTheLine() {
        XCTAssertEqual(completion.complete(":he"), .insert("lp"))
        XCTAssertEqual(completion.complete(":"), .choices([":apply", ":help", ":quit"]))
        XCTAssertEqual(NameCompletion.word(before: "x = list:co"), "co")
    }

    func testTheWordIsTheNameBeforeTheCursor() {
        XCTAssertEqual(NameCompletion.word(before: "for u in hub.users.li"), "hub.users.li")
        XCTAssertEqual(NameCompletion.word(before: "f(a,b.c_d1"), "b.c_d1")
        XCTAssertEqual(NameCompletion.word(before: "é"), "")
        XCTAssertEqual(NameCompletion.word(before: ""), "")
    }
}
