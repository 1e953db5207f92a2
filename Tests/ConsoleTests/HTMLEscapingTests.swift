import XCTest
@testable import Console

/// The one escaping function and the `HTML` type that applies it to every interpolated text.
final class HTMLEscapingTests: XCTestCase {
    func testMarkupCharactersBecomeReferences() {
        XCTAssertEqual(HTML.escape("<script>alert(1)</script>"), "&lt;script&gt;alert(1)&lt;/script&gt;")
        XCTAssertEqual(HTML.escape("\"><img src=x onerror=alert(1)>"), "&quot;&gt;&lt;img src=x onerror=alert(1)&gt;")
        XCTAssertEqual(HTML.escape("it's & \"quoted\""), "it&#39;s &amp; &quot;quoted&quot;")
        XCTAssertEqual(HTML.escape("&lt;"), "&amp;lt;")
    }

    func testHiddenCharactersAreShownByCodePoint() {
        XCTAssertEqual(HTML.escape("evil\u{202E}gpj.exe"), "evil‹U+202E›gpj.exe")
        XCTAssertEqual(HTML.escape("a\u{0}b"), "a‹U+0000›b")
        XCTAssertEqual(HTML.escape("\u{2066}x\u{2069}\u{200F}\u{061C}"), "‹U+2066›x‹U+2069›‹U+200F›‹U+061C›")
        XCTAssertEqual(HTML.escape("\u{1B}[31m\u{7F}\u{85}\r"), "‹U+001B›[31m‹U+007F›‹U+0085›‹U+000D›")
        XCTAssertEqual(HTML.escape("zero\u{200B}width\u{FEFF}\u{2028}"), "zero‹U+200B›width‹U+FEFF›‹U+2028›")
        // Tabs, line feeds and ordinary text (right-to-left included) stay as they are.
        XCTAssertEqual(HTML.escape("a\tb\nשלום é 🙂"), "a\tb\nשלום é 🙂")
    }

    func testInterpolatedTextIsEscapedAndMarkupIsNot() {
        let name = "\"><img src=x onerror=alert(1)>"
        let inner: HTML = "<b>bold</b>"
        let html: HTML = "<td title=\"\(name)\">\(name)\(inner)\(42)</td>"
        XCTAssertEqual(html.markup, "<td title=\"&quot;&gt;&lt;img src=x onerror=alert(1)&gt;\">&quot;&gt;&lt;img src=x onerror=alert(1)&gt;<b>bold</b>42</td>")
    }

    func testFieldIsolatesDirection() {
        XCTAssertEqual(HTML.field("<i>\u{202E}").markup, "<bdi>&lt;i&gt;‹U+202E›</bdi>")
    }

    func testLinksEncodeEverythingButUnreservedCharacters() {
        XCTAssertEqual(URLText.component("nightly@2026-01-01T10:00:00Z"), "nightly%402026-01-01T10%3A00%3A00Z")
        XCTAssertEqual(URLText.component("a/b?c&d#e f\"<"), "a%2Fb%3Fc%26d%23e%20f%22%3C")
        XCTAssertEqual(URLText.component("é"), "%C3%A9")
        XCTAssertEqual(URLText.link("/runs", [("status", "failed"), ("recipe", ""), ("job", "a&b")]), "/runs?status=failed&job=a%26b")
    }
}
