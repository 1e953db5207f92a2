import XCTest
import SystemText

final class HexTests: XCTestCase {
    func testEncodesEveryByteAsTwoDigits() {
        XCTAssertEqual(Hex.encode([]), "")
        XCTAssertEqual(Hex.encode([0x00, 0x01, 0x7F, 0x80, 0xAB, 0xFF]), "00017f80abff")
        XCTAssertEqual(Hex.encode([0x00, 0x01, 0x7F, 0x80, 0xAB, 0xFF], uppercase: true), "00017F80ABFF")
        let all = (0...255).map(UInt8.init)
        XCTAssertEqual(Hex.encode(all), all.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined())
        XCTAssertEqual(Hex.encodedBytes([0xC3]), Array("c3".utf8))
        XCTAssertEqual((0...15).map { Hex.digit($0) }, Array("0123456789abcdef".utf8))
        XCTAssertEqual((0...15).map { Hex.digit($0, uppercase: true) }, Array("0123456789ABCDEF".utf8))
    }

    func testDecodesWhatItEncodesInEitherCase() {
        let all = (0...255).map(UInt8.init)
        XCTAssertEqual(Hex.decode(Hex.encode(all)), all)
        XCTAssertEqual(Hex.decode(Hex.encode(all, uppercase: true)), all)
        XCTAssertEqual(Hex.decode("aBcD"), [0xAB, 0xCD])
        XCTAssertEqual(Hex.decode(""), [])
        XCTAssertEqual(Hex.decode(utf8: Array("0a".utf8)), [0x0A])
    }

    func testRefusesAnythingButPairsOfHexDigits() {
        for text in ["a", "abc", "0g", "g0", "0x00", " 00", "00 ", "+0", "é0", "０0", "0:"] {
            XCTAssertNil(Hex.decode(text), text)
        }
        XCTAssertNil(Hex.value(0x2F))
        XCTAssertNil(Hex.value(0x3A))
        XCTAssertNil(Hex.value(0x40))
        XCTAssertNil(Hex.value(0x47))
        XCTAssertNil(Hex.value(0x60))
        XCTAssertNil(Hex.value(0x67))
    }
}
