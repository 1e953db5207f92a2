import Foundation
import ScriptHost
import SystemText
import XCTest
@testable import RecipeModules

/// Files a recipe can plant through `export`: only data files of its format, never a
/// file hubscript reads, and never through a link or a folder planted in the output folder.
final class ExportSafetyTests: XCTestCase {
    func testNamesHubscriptReadsAreRefusedAndNothingIsCreated() throws {
        for name in ["hubscript.config.lua", "config.lua", "lib.users.lua", "hubscript.lock", "plan.json", "me.json",
                     "journal.sqlite", "hub.sqlite", "events.jsonl.lua", "run.sh", "notes.txt", "a.tsv"] {
            let h = try RecipeHarness()
            XCTAssertEqual(h.runFailing("export.jsonl('\(name)', { {a = 1} })"),
                           "recipes/test.lua:1: bad argument #1 to 'export.jsonl' (export.jsonl writes only .jsonl or .ndjson files, got '\(name)'; a name without an extension gets .jsonl)")
            XCTAssertEqual(h.runFailing("export.csv('\(name)', { {a = 1} })"),
                           "recipes/test.lua:1: bad argument #1 to 'export.csv' (export.csv writes only .csv files, got '\(name)'; a name without an extension gets .csv)")
            XCTAssertFalse(FileManager.default.fileExists(atPath: h.outFolder.path), "\(name): nothing created, not even the folder")
        }
        let h = try RecipeHarness()
        XCTAssertEqual(h.runFailing("export.csv('users.jsonl', {})"),
                       "recipes/test.lua:1: bad argument #1 to 'export.csv' (export.csv writes only .csv files, got 'users.jsonl'; a name without an extension gets .csv)")
    }

    func testDataNamesAndNamesWithoutAnExtension() throws {
        let h = try RecipeHarness()
        h.runOK("""
        print(export.jsonl("report", { {a = 1} }).name, export.csv("Makefile", { {a = 1} }).name)
        export.jsonl("A.JSONL", {}); export.jsonl("b.ndjson", {}); export.csv("C.Csv", {})
        """)
        XCTAssertEqual(h.output.lines, ["report.jsonl\tMakefile.csv"])
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.outFolder.path).sorted(),
                       ["A.JSONL", "C.Csv", "Makefile.csv", "b.ndjson", "report.jsonl"])
        XCTAssertEqual(try h.exported("report.jsonl"), "{\"a\":1}\n")
        XCTAssertEqual(h.runFailing("export.jsonl('report.jsonl', {})"),
                       "recipes/test.lua:1: export.jsonl: 'report.jsonl' was already exported in this run; use another name")
    }

    /// A hard link planted at a temporary name an export once used (`.NAME.partial`) must
    /// not make the export write into the linked file outside the folder.
    func testALinkAtTheOldTemporaryNameRedirectsNothing() throws {
        let h = try RecipeHarness()
        let outside = try h.file("outside.txt", "keep me\n")
        try FileManager.default.createDirectory(at: h.outFolder, withIntermediateDirectories: true)
        let planted = h.outFolder.appendingPathComponent(".events.jsonl.partial").path
        XCTAssertEqual(link(outside, planted), 0)
        h.runOK("export.jsonl('events.jsonl', { {a = 1} })")
        XCTAssertEqual(try String(contentsOfFile: outside, encoding: .utf8), "keep me\n")
        XCTAssertEqual(try h.exported("events.jsonl"), "{\"a\":1}\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.outFolder.path).sorted(),
                       [".events.jsonl.partial", "events.jsonl"])
    }

    func testAHardLinkAtTheFinalNameIsRefusedAndLeftUntouched() throws {
        let h = try RecipeHarness()
        let outside = try h.file("outside.txt", "keep me\n")
        try FileManager.default.createDirectory(at: h.outFolder, withIntermediateDirectories: true)
        let final = h.outFolder.appendingPathComponent("events.jsonl").path
        XCTAssertEqual(link(outside, final), 0)
        XCTAssertEqual(h.runFailing("export.jsonl('events.jsonl', { {a = 1} })"),
                       "recipes/test.lua:1: export.jsonl: \(final) has 2 hard links (other names share its contents); an export replaces only a plain file, so it was left untouched (remove it, or choose another export name)")
        XCTAssertEqual(try String(contentsOfFile: outside, encoding: .utf8), "keep me\n")
        XCTAssertEqual(try String(contentsOfFile: final, encoding: .utf8), "keep me\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.outFolder.path), ["events.jsonl"], "no temporary file left")
    }

    func testASymbolicLinkOrAFolderAtTheFinalNameIsRefused() throws {
        let h = try RecipeHarness()
        let outside = try h.file("outside.txt", "keep me\n")
        try FileManager.default.createDirectory(at: h.outFolder.appendingPathComponent("dir.csv"), withIntermediateDirectories: true)
        let linkPath = h.outFolder.appendingPathComponent("events.jsonl").path
        XCTAssertEqual(symlink(outside, linkPath), 0)
        XCTAssertEqual(h.runFailing("export.jsonl('events.jsonl', { {a = 1} })"),
                       "recipes/test.lua:1: export.jsonl: \(linkPath) is a symbolic link; an export replaces only a plain file, so it was left untouched (remove it, or choose another export name)")
        XCTAssertEqual(try FileManager.default.destinationOfSymbolicLink(atPath: linkPath), outside)
        XCTAssertEqual(try String(contentsOfFile: outside, encoding: .utf8), "keep me\n")
        XCTAssertEqual(h.runFailing("export.csv('dir.csv', { {a = 1} })"),
                       "recipes/test.lua:1: export.csv: \(h.outFolder.path)/dir.csv is a folder; an export replaces only a plain file, so it was left untouched (remove it, or choose another export name)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.outFolder.path).sorted(), ["dir.csv", "events.jsonl"])
    }

    /// A link planted while the export runs is caught just before the rename.
    func testALinkPlantedDuringTheExportIsRefusedAtTheEnd() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-export-safety-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let outside = root.appendingPathComponent("outside.txt").path
        try Data("keep me\n".utf8).write(to: URL(fileURLWithPath: outside))
        let session = ExportSession(folder: root.appendingPathComponent("out"), masking: SecretRedactor())
        let id = try session.begin(name: "events.jsonl", format: .jsonl, function: "export.jsonl")
        try session.export(id).write(.object(["a": .integer(1)]))
        let final = root.appendingPathComponent("out/events.jsonl").path
        XCTAssertEqual(link(outside, final), 0)
        XCTAssertThrowsError(try session.complete(id)) { error in
            XCTAssertEqual("\(error)", "export.jsonl: \(final) has 2 hard links (other names share its contents); an export replaces only a plain file, so it was left untouched (remove it, or choose another export name)")
        }
        XCTAssertEqual(try String(contentsOfFile: outside, encoding: .utf8), "keep me\n")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.appendingPathComponent("out").path), ["events.jsonl"])
        XCTAssertEqual(session.files, [])
    }

    func testTemporaryFilesAreCreatedExclusivelyWithRandomNames() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-export-safety-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
        let folder = try ExportFolder(path: root.path)
        let (fd1, name1) = try folder.createTemporary(for: "a.jsonl")
        let (fd2, name2) = try folder.createTemporary(for: "a.jsonl")
        close(fd1)
        close(fd2)
        XCTAssertNotEqual(name1, name2)
        XCTAssertTrue(name1.hasPrefix(".a.jsonl.") && name1.hasSuffix(".partial"), name1)
        XCTAssertEqual(name1.count, ".a.jsonl.".count + 16 + ".partial".count)
        let mode = try FileManager.default.attributesOfItem(atPath: root.appendingPathComponent(name1).path)[.posixPermissions] as? NSNumber
        XCTAssertEqual(mode?.intValue, 0o600)
    }
}
