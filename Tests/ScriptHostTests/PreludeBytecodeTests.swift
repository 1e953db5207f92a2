import Foundation
import XCTest
@testable import ScriptHost

/// Sources/CLuaChunks/prelude_bytecode.c holds the preludes compiled to bytecode. When a
/// prelude changes, scripts/generate-prelude-bytecode writes the file again; until then
/// these tests fail (and the binary parses the changed text: stale bytecode is never run).
/// They only read the file.
final class PreludeBytecodeTests: XCTestCase {
    static let headerPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/CLuaChunks/prelude_bytecode.c").path

    static let staleAdvice = "Sources/CLuaChunks/prelude_bytecode.c is stale: run scripts/generate-prelude-bytecode, rebuild, and commit the file"

    func testTheCommittedBytecodeIsTheCurrentPreludes() throws {
        let expected = try XCTUnwrap(PreludeChunk.generatedSource(), "the preludes compile")
        let committed = try String(contentsOfFile: Self.headerPath, encoding: .utf8)
        XCTAssertTrue(committed == expected, Self.staleAdvice)
    }

    /// With an up-to-date file, both preludes run from their bytecode.
    func testBothPreludesRunFromBytecode() throws {
        XCTAssertTrue(PreludeChunk.usesBytecode.main, "Prelude.source is parsed. \(Self.staleAdvice)")
        XCTAssertTrue(PreludeChunk.usesBytecode.data, "Prelude.dataSource is parsed. \(Self.staleAdvice)")
    }

    /// The hash is FNV-1a (64 bits): the published test vectors of its authors.
    func testTheHashIsFNV1aOnItsPublishedVectors() {
        func fnv1a(_ text: String) -> UInt64 {
            var hash = FNV1a64()
            for byte in text.utf8 { hash.mix(byte) }
            return hash.value
        }
        XCTAssertEqual(fnv1a(""), 0xcbf2_9ce4_8422_2325)
        XCTAssertEqual(fnv1a("a"), 0xaf63_dc4c_8601_ec8c)
        XCTAssertEqual(fnv1a("foobar"), 0x8594_4171_f739_67e8)
    }

    /// A chunk's hash covers every byte of the text's UTF-8 and then the Lua release, so
    /// an edited prelude or another Lua never runs old bytecode. The expected values are
    /// FNV-1a computed over the bytes spelt out here, not through `sourceHash`.
    func testTheSourceHashCoversTheTextThenTheLuaRelease() {
        let release = PreludeChunk.luaRelease
        let releaseBytes = (0..<4).map { UInt8(truncatingIfNeeded: release >> (8 * $0)) }
        func expected(_ bytes: [UInt8]) -> UInt64 {
            var hash = FNV1a64()
            for byte in bytes + releaseBytes { hash.mix(byte) }
            return hash.value
        }
        for text in ["", "a", "é\u{0}x", Prelude.dataSource] {
            XCTAssertEqual(PreludeChunk.sourceHash(text), expected(Array(text.utf8)), text.prefix(20).debugDescription)
        }
        // A string without contiguous UTF-8 (bridged, or made from a substring) hashes the same.
        let source = Prelude.source
        XCTAssertEqual(PreludeChunk.sourceHash(String(source.dropFirst())), expected(Array(source.utf8.dropFirst())))
        XCTAssertNotEqual(PreludeChunk.sourceHash(source), PreludeChunk.sourceHash(source + " "))
    }
}
