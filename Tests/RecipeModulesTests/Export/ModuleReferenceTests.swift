import Foundation
import ScriptHost
import SystemText
import XCTest
import RecipeModules

final class ExportModuleReferenceTests: XCTestCase {
    /// The generated module reference documents the public functions, not the internal ones.
    func testModuleReferenceListsThePublicFunctionsWithSummaries() throws {
        let session = ExportSession(folder: FileManager.default.temporaryDirectory.appendingPathComponent("unused"), masking: SecretRedactor())
        let plugins = [ExportPlugin.make(session: session), CSVPlugin.make(allowedFiles: []),
                       ProgressPlugin.make(reporter: MemoryProgressReporter())]
        let reference = ModuleReference.markdown(plugins: plugins)
        for row in ["| `export.jsonl` | — | no | export.jsonl(name, rows) -> summary:",
                    "| `export.csv` | — | no | export.csv(name, rows [, {columns = {…}, excel_safe = false}]) -> summary:",
                    "| `csv.rows` | — | no | csv.rows(path) -> iterator:",
                    "| `progress.start` | — | no | progress(total [, label]) or progress.start(total [, label]) -> bar"] {
            XCTAssertTrue(reference.contains(row), "missing: \(row)")
        }
        XCTAssertFalse(reference.contains("_write"))
        XCTAssertFalse(reference.contains("internal:"))
        for plugin in plugins {
            XCTAssertFalse(plugin.summary.isEmpty)
            for function in plugin.functions { XCTAssertFalse(function.summary.isEmpty, function.name) }
        }
    }
}
