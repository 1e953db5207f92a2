import Foundation
import XCTest
@testable import ScriptHost

/// Typed parameters — a job's or a trigger's from the configuration, a resumed run's
/// from the journal — are held to the same 1 MiB as the command line's.
final class ParamsSizeTests: XCTestCase {
    func testTypedParametersPastTheLimitAreRefused() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("params-size-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let recipe = folder.appendingPathComponent("r.lua")
        try Data("""
            recipe { name = "r", version = "1.0.0", description = "d",
                     params = { note = { type = "string" }, tags = { type = "list", default = {} } } }
            """.utf8).write(to: recipe)
        // Under the limit once encoded: accepted.
        let fits = String(repeating: "a", count: ParamValues.maxBytes - 100)
        XCTAssertNoThrow(try PreparedRecipe(path: recipe.path, paramValues: ["note": .string(fits)]))
        // Escaping grows a value past it (a control character is six bytes in JSON).
        let grows = String(repeating: "\u{1}", count: 200_000)
        XCTAssertThrowsError(try PreparedRecipe(path: recipe.path, paramValues: ["note": .string(grows)])) { error in
            XCTAssertEqual("\(error)", """
                the parameters take 1.1 MiB (largest: 'note'); a run's parameters hold at most 1 MiB (they are journalled \
                with the run). Pass large data as a file parameter (type = "file": its path is journalled, the recipe reads the file)
                """)
        }
        // Many small items add up.
        let items = (0..<200_000).map { _ in ScriptValue.string("item") }
        XCTAssertThrowsError(try PreparedRecipe(path: recipe.path, paramValues: ["tags": .array(items)])) { error in
            XCTAssertTrue("\(error)".hasPrefix("the parameters take 1.3 MiB (largest: 'tags')"), "\(error)")
        }
    }
}
