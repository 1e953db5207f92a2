import Foundation
import ScriptHost
import SystemText
import XCTest
import RecipeModules

/// A temporary folder per test, with helpers to run recipe text through
/// `ScriptRuntime.run` with the export, csv and progress plugins installed.
final class RecipeHarness {
    let root: URL
    let output = MemoryOutput()
    let exports: ExportSession
    let progress = MemoryProgressReporter()
    var allowedFiles: Set<String> = []
    private(set) var csvSession: CSVSession?

    /// `outFolder`: where exports go (default: `out` in the harness's own folder).
    init(outFolder: URL? = nil) throws {
        root = FileManager.default.temporaryDirectory
            .appendingPathComponent("hubscript-export-tests-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        self.outFolder = outFolder ?? root.appendingPathComponent("out")
        exports = ExportSession(folder: self.outFolder, masking: SecretRedactor())
    }

    deinit { try? FileManager.default.removeItem(at: root) }

    let outFolder: URL

    /// Writes `bytes` to a file under the root and returns its absolute path.
    @discardableResult
    func file(_ name: String, _ bytes: [UInt8]) throws -> String {
        let url = root.appendingPathComponent(name)
        try Data(bytes).write(to: url)
        return url.path
    }

    func file(_ name: String, _ text: String) throws -> String { try file(name, Array(text.utf8)) }

    /// Runs `source` as `recipes/test.lua` (so messages read `recipes/test.lua:LINE:`).
    func run(_ source: String, memoryMiB: Int? = nil) -> RunReport {
        var configuration = RunConfiguration(output: output)
        let csv = CSVSession(allowedFiles: allowedFiles)
        csvSession = csv
        configuration.plugins = [
            JSONPlugin.make(), ExportPlugin.make(session: exports), CSVPlugin.make(session: csv),
            ProgressPlugin.make(reporter: progress),
        ]
        if let memoryMiB { configuration.limits.memoryBytes = memoryMiB << 20 }
        let recipe = RecipeFile(displayPath: "recipes/test.lua", url: root.appendingPathComponent("test.lua"), source: source)
        let report = ScriptRuntime.run(recipe, configuration: configuration)
        exports.finish()
        return report
    }

    /// Runs `source` and fails the test if the run failed.
    @discardableResult
    func runOK(_ source: String, file: StaticString = #filePath, line: UInt = #line) -> RunReport {
        let report = run(source)
        XCTAssertNil(report.failure, "run failed: \(report.failure?.message ?? "")", file: file, line: line)
        return report
    }

    /// Runs `source`, expects it to fail, returns the message.
    func runFailing(_ source: String, file: StaticString = #filePath, line: UInt = #line) -> String {
        let report = run(source)
        XCTAssertNotNil(report.failure, "the run should have failed", file: file, line: line)
        return report.failure?.message ?? ""
    }

    /// The text of an exported file.
    func exported(_ name: String) throws -> String {
        try String(contentsOf: outFolder.appendingPathComponent(name), encoding: .utf8)
    }
}
