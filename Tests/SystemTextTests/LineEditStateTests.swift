import SystemText
import XCTest

/// The repl's line editing, key by key: insertion and deletion at the cursor, moving,
/// killing, the history, Tab, Ctrl-C and Ctrl-D.
final class LineEditStateTests: XCTestCase {
    let completion = NameCompletion(names: ["hub.users.get", "hub.users.list"])

    func type(_ text: String, into state: inout LineEditState) {
        for c in text { XCTAssertEqual(state.handle(.character(c), completion: completion), .redraw) }
    }

    func testTypingInsertsAtTheCursor() {
        var state = LineEditState(history: [])
        type("ac", into: &state)
        XCTAssertEqual(state.handle(.left, completion: completion), .redraw)
        type("b", into: &state)
        XCTAssertEqual(String(state.buffer), "abc")
        XCTAssertEqual(state.cursor, 2)
        XCTAssertEqual(state.handle(.end, completion: completion), .redraw)
        XCTAssertEqual(state.handle(.right, completion: completion), .bell)
        XCTAssertEqual(state.handle(.enter, completion: completion), .accept)
    }

    func testDeletingAndKilling() {
        var state = LineEditState(history: [])
        type("local x = 1", into: &state)
        XCTAssertEqual(state.handle(.backspace, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "local x = ")
        XCTAssertEqual(state.handle(.killWord, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "local x ")
        XCTAssertEqual(state.handle(.home, completion: completion), .redraw)
        XCTAssertEqual(state.handle(.backspace, completion: completion), .bell)
        XCTAssertEqual(state.handle(.delete, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "ocal x ")
        XCTAssertEqual(state.handle(.ctrlD, completion: completion), .redraw, "Ctrl-D in a line deletes under the cursor")
        XCTAssertEqual(String(state.buffer), "cal x ")
        XCTAssertEqual(state.handle(.right, completion: completion), .redraw)
        XCTAssertEqual(state.handle(.killToEnd, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "c")
        XCTAssertEqual(state.handle(.killToStart, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "")
        XCTAssertEqual(state.handle(.ctrlD, completion: completion), .endOfInput, "Ctrl-D on an empty line ends the input")
    }

    func testHistoryUpAndDownKeepTheLineBeingTyped() {
        var state = LineEditState(history: ["first", "second"])
        type("new", into: &state)
        XCTAssertEqual(state.handle(.up, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "second")
        XCTAssertEqual(state.handle(.up, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "first")
        XCTAssertEqual(state.cursor, 5)
        XCTAssertEqual(state.handle(.up, completion: completion), .bell)
        XCTAssertEqual(state.handle(.down, completion: completion), .redraw)
        XCTAssertEqual(state.handle(.down, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "new")
        XCTAssertEqual(state.handle(.down, completion: completion), .bell)
    }

    func testTabCompletesAtTheCursorOrListsTheChoices() {
        var state = LineEditState(history: [])
        type("x = hub.u", into: &state)
        XCTAssertEqual(state.handle(.tab, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "x = hub.users.")
        XCTAssertEqual(state.handle(.tab, completion: completion), .list(["get", "list"]))
        type("g", into: &state)
        XCTAssertEqual(state.handle(.tab, completion: completion), .redraw)
        XCTAssertEqual(String(state.buffer), "x = hub.users.get")
        XCTAssertEqual(state.handle(.tab, completion: completion), .bell)
    }

    func testCtrlCDropsTheLine() {
        var state = LineEditState(history: [])
        type("oops", into: &state)
        XCTAssertEqual(state.handle(.ctrlC, completion: completion), .cancel)
    }

    func testKeysFromBytesAndEscapeSequences() {
        XCTAssertEqual(LineEditKey.control(13), .enter)
        XCTAssertEqual(LineEditKey.control(127), .backspace)
        XCTAssertEqual(LineEditKey.control(9), .tab)
        XCTAssertEqual(LineEditKey.control(UInt8(ascii: "a")), .character("a"))
        XCTAssertEqual(LineEditKey.control(0), .other)
        XCTAssertEqual(LineEditKey.escape("A"), .up)
        XCTAssertEqual(LineEditKey.escape("3~"), .delete)
        XCTAssertEqual(LineEditKey.escape("H"), .home)
        XCTAssertEqual(LineEditKey.escape("Z"), .other)
    }

    func testALineStopsGrowingAtTheTerminalsLineLength() {
        var state = LineEditState(history: [])
        type(String(repeating: "a", count: LineEditState.maxCharacters - 1), into: &state)
        XCTAssertEqual(state.handle(.character("b"), completion: completion), .redraw)
        XCTAssertEqual(state.handle(.character("c"), completion: completion), .bell, "a pasted line stops at the bound")
        XCTAssertEqual(state.buffer.count, LineEditState.maxCharacters)
        XCTAssertEqual(state.buffer.last, "b")
        XCTAssertEqual(state.handle(.backspace, completion: completion), .redraw)
        XCTAssertEqual(state.handle(.home, completion: completion), .redraw)
        type("h", into: &state)
        XCTAssertEqual(state.handle(.tab, completion: completion), .bell, "a completion that would pass the bound is refused")
        XCTAssertEqual(state.buffer.count, LineEditState.maxCharacters)
    }
}
