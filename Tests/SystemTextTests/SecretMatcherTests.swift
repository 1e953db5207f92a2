import Foundation
import XCTest
@testable import SystemText

/// `SecretMatcher` finds what a plain search finds (leftmost, longest first, no overlap),
/// and `SecretForms` masks a secret wherever a server could put it: raw, JSON-escaped,
/// hex, percent-encoded and base64 at any offset, with nothing of the secret left beside
/// the mask.
final class SecretMatcherTests: XCTestCase {
    func bytes(_ s: String) -> [UInt8] { Array(s.utf8) }

    func mask(_ matcher: SecretMatcher, _ text: String) -> String { matcher.masked(text) }

    /// A plain search, for comparison: leftmost match, longest pattern first, no overlap.
    func reference(_ patterns: [[UInt8]], _ masks: [[UInt8]], _ text: [UInt8]) -> [UInt8] {
        let order = patterns.indices.sorted { patterns[$0].count > patterns[$1].count }
        var out: [UInt8] = []
        var i = 0
        while i < text.count {
            if let p = order.first(where: { i + patterns[$0].count <= text.count && Array(text[i..<(i + patterns[$0].count)]) == patterns[$0] }) {
                out += masks[p]
                i += patterns[p].count
            } else {
                out.append(text[i])
                i += 1
            }
        }
        return out
    }

    func testMasksEveryOccurrenceAtTheEdgesAndBetween() {
        let m = SecretMatcher([.init(bytes("s3cr3t"), mask: bytes("<S>"))])
        XCTAssertEqual(mask(m, "s3cr3t"), "<S>")
        XCTAssertEqual(mask(m, "s3cr3ts3cr3t"), "<S><S>")
        XCTAssertEqual(mask(m, "a s3cr3t b s3cr3t"), "a <S> b <S>")
        XCTAssertEqual(mask(m, "s3cr3"), "s3cr3")
        XCTAssertEqual(mask(m, ""), "")
        XCTAssertEqual(mask(m, "sss3cr3t3cr3t"), "ss<S>3cr3t")
        XCTAssertNil(m.masked(UnsafeRawBufferPointer(start: nil, count: 0)))
    }

    func testTheLongestPatternWinsAtAPositionAndMatchesDoNotOverlap() {
        let m = SecretMatcher([.init(bytes("abcd"), mask: bytes("<short>")), .init(bytes("abcdef"), mask: bytes("<long>")),
                               .init(bytes("defg"), mask: bytes("<d>"))])
        XCTAssertEqual(mask(m, "xabcdefg"), "x<long>g")
        XCTAssertEqual(mask(m, "abcdxdefg"), "<short>x<d>")
        XCTAssertEqual(m.firstMatch(UnsafeRawBufferPointer(start: nil, count: 0)), nil)
        XCTAssertEqual(bytes("abcdefg").withUnsafeBytes { m.firstMatch($0)?.mask }, bytes("<long>"))
        XCTAssertEqual(bytes("zzzz").withUnsafeBytes { m.firstMatch($0) }, nil)
    }

    /// Random texts over a small alphabet (so near-misses and overlaps are common) with
    /// random patterns planted: the same result as the plain search, every time.
    func testAgreesWithAPlainSearchOnRandomTexts() {
        var rng = SystemRandomNumberGenerator()
        for _ in 0..<3000 {
            let alphabet = Array("abc".utf8)
            let count = Int.random(in: 1...4, using: &rng)
            let patterns = (0..<count).map { _ in (0..<Int.random(in: 1...7, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! } }
            let masks = patterns.indices.map { bytes("<\($0)>") }
            var text = (0..<Int.random(in: 0...60, using: &rng)).map { _ in alphabet.randomElement(using: &rng)! }
            if let p = patterns.randomElement(using: &rng), Bool.random(using: &rng) {
                text.insert(contentsOf: p, at: Int.random(in: 0...text.count, using: &rng))
            }
            // Duplicate patterns keep the first's mask, as the matcher does.
            var unique: [[UInt8]] = [], uniqueMasks: [[UInt8]] = []
            for (p, m) in zip(patterns, masks) where !unique.contains(p) { unique.append(p); uniqueMasks.append(m) }
            let matcher = SecretMatcher(zip(patterns, masks).map { SecretMatcher.Pattern($0, mask: $1) })
            let got = text.withUnsafeBytes { matcher.masked($0) } ?? text
            XCTAssertEqual(got, reference(unique, uniqueMasks, text), "patterns \(patterns.map { String(decoding: $0, as: UTF8.self) }) text \(String(decoding: text, as: UTF8.self))")
        }
    }

    static let token = "dsp_live_Qx9/+k=\"7\\z"

    /// What a server could echo of `Authorization: Bearer TOKEN`, in each common encoding.
    static func echoes(of header: String) -> [String: String] {
        let data = Data(header.utf8)
        let b64 = data.base64EncodedString()
        let url = b64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_")
        let json = String(data: try! JSONSerialization.data(withJSONObject: [header], options: []), encoding: .utf8)!
        let percent = header.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!
        let unreserved = header.addingPercentEncoding(withAllowedCharacters: CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~"))!
        let lowerHex = percent.replacingOccurrences(of: "%[0-9A-F]{2}", with: "$0", options: .regularExpression)
            .components(separatedBy: "%").enumerated().map { $0.offset == 0 ? $0.element : $0.element.prefix(2).lowercased() + $0.element.dropFirst(2) }
            .joined(separator: "%")
        return [
            "raw": header, "base64": b64, "base64url": url,
            "base64url-unpadded": url.replacingOccurrences(of: "=", with: ""),
            "hex": data.map { String(format: "%02x", $0) }.joined(), "HEX": data.map { String(format: "%02X", $0) }.joined(),
            "percent": percent, "percent-lower": lowerHex, "percent-unreserved": unreserved,
            "json": json,
        ]
    }

    func testEveryCommonEncodingOfAnEchoedTokenIsMasked() {
        let forms = SecretForms.all(bytes(Self.token), mask: bytes("<secret t>"))
        let matcher = SecretMatcher(forms)
        // The token at every offset within a base64 group, with text on both sides.
        for prefix in ["Bearer ", "Bearer x", "Bearer xy", "", "a", "ab"] {
            for suffix in ["", "!", "!!", "!!!"] {
                for (name, echo) in Self.echoes(of: prefix + Self.token + suffix) {
                    let masked = matcher.masked("error: " + echo + " (refused)")
                    XCTAssertTrue(masked.contains("<secret t>"), "\(name) of \(prefix)…\(suffix) not masked: \(masked)")
                    XCTAssertFalse(masked.contains("Qx9"), "\(name): \(masked)")
                }
            }
        }
    }

    /// Beside a masked base64 copy, only characters made of the text around the secret
    /// remain: none that carries a bit of it.
    func testNothingOfTheSecretRemainsBesideAMaskedBase64Copy() {
        let secret = bytes("0123456789ab")
        let matcher = SecretMatcher(SecretForms.all(secret, mask: bytes("#")))
        for before in 0..<6 {
            for after in 0..<6 {
                let whole = [UInt8](repeating: 0x41, count: before) + secret + [UInt8](repeating: 0x42, count: after)
                let encoded = Data(whole).base64EncodedString()
                let masked = matcher.masked(encoded)
                let parts = masked.split(separator: "#", omittingEmptySubsequences: false)
                XCTAssertEqual(parts.count, 2, "one mask in \(masked) (before \(before), after \(after))")
                // Only characters with no bit of the secret may remain: those wholly
                // before its first bit, and those wholly after its last.
                let startBit = before * 8, endBit = (before + secret.count) * 8, totalBits = whole.count * 8
                XCTAssertLessThanOrEqual(parts[0].count, startBit / 6, "before \(before), after \(after): \(masked)")
                let tail = parts[1].filter { $0 != "=" }.count
                XCTAssertLessThanOrEqual(tail, (totalBits + 5) / 6 - (endBit + 5) / 6, "before \(before), after \(after): \(masked)")
            }
        }
    }

    /// A server answering in UTF-16 (either byte order), or changing the token's case,
    /// hands back nothing of it: a recipe could drop the zero bytes, or try the few case
    /// patterns a token's letters allow.
    func testUTF16AndCaseChangedEchoesAreMasked() {
        let matcher = SecretMatcher(SecretForms.all(bytes(Self.token), mask: bytes("<secret t>")))
        let header = "Bearer " + Self.token
        let texts: [(String, [UInt8])] = [
            ("utf16le", Array(("error: " + header).data(using: .utf16LittleEndian)!)),
            ("utf16be", Array(("error: " + header).data(using: .utf16BigEndian)!)),
            ("upper", bytes("error: " + header.uppercased())),
            ("lower", bytes("error: " + header.lowercased())),
        ]
        for (name, text) in texts {
            let masked = text.withUnsafeBytes { matcher.masked($0) } ?? text
            XCTAssertTrue(String(decoding: masked, as: UTF8.self).contains("<secret t>"), name)
            let letters = String(decoding: masked.filter { $0 != 0 }, as: UTF8.self).lowercased()
            XCTAssertFalse(letters.contains("qx9"), "\(name): \(letters)")
        }
    }

    func testFormsShorterThanTheMinimumAreLeftOut() {
        XCTAssertEqual(SecretForms.all(bytes("abc"), mask: bytes("#")), [])
        let forms = SecretForms.all(bytes("abcd"), mask: bytes("#")).map { String(decoding: $0.bytes, as: UTF8.self) }
        XCTAssertTrue(forms.allSatisfy { $0.utf8.count >= SecretForms.minimumLength }, "\(forms)")
        XCTAssertTrue(forms.contains("abcd") && forms.contains("61626364") && forms.contains("YWJjZ"), "\(forms)")
        XCTAssertEqual(forms.count, Set(forms).count, "no form twice: \(forms)")
    }
}
