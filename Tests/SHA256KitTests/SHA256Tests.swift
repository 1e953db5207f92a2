import Foundation
import SystemText
import XCTest
@testable import SHA256Kit

/// The accelerated SHA-256 (CVault) gives libsodium's digests: FIPS 180-2 vectors,
/// every length to 1100 bytes fed in uneven pieces, and a megabyte.
final class SHA256Tests: XCTestCase {
    func digest(_ bytes: [UInt8], accelerated: Bool, pieces: [Int] = []) -> String {
        var hasher = SHA256(accelerated: accelerated)
        var offset = 0
        var k = 0
        while offset < bytes.count {
            let n = pieces.isEmpty ? bytes.count : min(pieces[k % pieces.count], bytes.count - offset)
            bytes[offset..<offset + n].withUnsafeBytes { hasher.update($0) }
            offset += n
            k += 1
        }
        if bytes.isEmpty { hasher.update(UnsafeRawBufferPointer(start: nil, count: 0)) }
        return Hex.encode(hasher.finish())
    }

    func backends() throws -> [Bool] {
        SHA256.accelerated ? [false, true] : [false]
    }

    func testTheFIPSVectors() throws {
        let vectors: [(String, String)] = [
            ("", "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855"),
            ("abc", "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad"),
            ("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq", "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1"),
        ]
        for accelerated in try backends() {
            for (text, expected) in vectors { XCTAssertEqual(digest(Array(text.utf8), accelerated: accelerated), expected, text) }
            XCTAssertEqual(digest([UInt8](repeating: 0x61, count: 1_000_000), accelerated: accelerated, pieces: [997]),
                           "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        }
    }

    /// The one-shot digest everything outside the vault hashes with (recipe, body and
    /// library digests): FIPS 180-4's examples, from no bytes to several blocks.
    func testTheOneShotDigestGivesTheFIPSVectors() {
        func oneShot(_ bytes: [UInt8]) -> String { Hex.encode(bytes.withUnsafeBytes { SHA256.digest($0) }) }
        XCTAssertEqual(oneShot([]), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(Hex.encode(SHA256.digest(UnsafeRawBufferPointer(start: nil, count: 0))),
                       "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855")
        XCTAssertEqual(oneShot(Array("abc".utf8)), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad")
        XCTAssertEqual(oneShot(Array("abcdbcdecdefdefgefghfghighijhijkijkljklmklmnlmnomnopnopq".utf8)),
                       "248d6a61d20638b8e5c026930c3e6039a33ce45964ff2167f6ecedd419db06c1")
        XCTAssertEqual(oneShot(Array(("abcdefghbcdefghicdefghijdefghijkefghijklfghijklmghijklmnhijklmno"
                                      + "ijklmnopjklmnopqklmnopqrlmnopqrsmnopqrstnopqrstu").utf8)),
                       "cf5b16a778af8380036ce59e7b0492370b249b11e8f07a51afac45037afee9d1")
        XCTAssertEqual(oneShot([UInt8](repeating: 0x61, count: 1_000_000)),
                       "cdc76e5c9914fb9281a1c7e284d73e67f1809a48a497200e046d39ccc7112cd0")
        XCTAssertEqual(SHA256.digest(UnsafeRawBufferPointer(start: nil, count: 0)).count, SHA256.byteCount)
    }

    func testTheAcceleratedDigestIsLibsodiumsForEveryLengthAndSplit() throws {
        guard SHA256.accelerated else { throw XCTSkip("this CPU has no SHA extensions: libsodium hashes alone") }
        var generator = SystemRandomNumberGenerator()
        let data = (0..<(1 << 20)).map { _ in UInt8.random(in: 0...255, using: &generator) }
        for length in 0...1100 {
            let bytes = Array(data[0..<length])
            XCTAssertEqual(digest(bytes, accelerated: true, pieces: [1, 63, 64, 65, 7]), digest(bytes, accelerated: false), "length \(length)")
        }
        XCTAssertEqual(digest(data, accelerated: true, pieces: [65536]), digest(data, accelerated: false))
    }
}
