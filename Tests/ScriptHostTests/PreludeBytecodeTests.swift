import Foundation
import XCTest
@testable import ScriptHost

/// Sources/CLuaChunks/prelude_bytecode.c holds the preludes compiled to bytecode. When a
/// prelude changes, this test fails once and writes the file again: rebuild, run the
/// tests, commit the file. (Until then the binary parses the changed text: stale
/// bytecode is never run.)
final class PreludeBytecodeTests: XCTestCase {
    static let headerPath = URL(fileURLWithPath: #filePath)
        .deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("Sources/CLuaChunks/prelude_bytecode.c").path

    func testTheCommittedBytecodeIsTheCurrentPreludes() throws {
        let expected = try XCTUnwrap(PreludeChunk.generatedSource(), "the preludes compile")
        let committed = try? String(contentsOfFile: Self.headerPath, encoding: .utf8)
        if committed != expected {
            try expected.write(toFile: Self.headerPath, atomically: true, encoding: .utf8)
            XCTFail("Sources/CLuaChunks/prelude_bytecode.c was stale and has been written again: rebuild, test and commit it")
        }
    }

    /// With an up-to-date file, both preludes run from their bytecode.
    func testBothPreludesRunFromBytecode() throws {
        XCTAssertTrue(PreludeChunk.usesBytecode.main, "Prelude.source is parsed: prelude_bytecode.c is stale")
        XCTAssertTrue(PreludeChunk.usesBytecode.data, "Prelude.dataSource is parsed: prelude_bytecode.c is stale")
    }

    /// The hash that guards the bytecode covers every byte of the text.
    func testAnyChangeToTheTextChangesItsHash() {
        let source = Prelude.source
        XCTAssertNotEqual(PreludeChunk.sourceHash(source), PreludeChunk.sourceHash(source + " "))
        XCTAssertNotEqual(PreludeChunk.sourceHash(source), PreludeChunk.sourceHash(String(source.dropFirst())))
        XCTAssertEqual(PreludeChunk.sourceHash(source), PreludeChunk.sourceHash(String(source)))
    }
}
