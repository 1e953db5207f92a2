import Foundation
import ScriptHost
import XCTest
import RecipeModules

final class ExportJSONLTests: XCTestCase {
    func testJSONLWritesOneCanonicalDocumentPerLineAndReturnsASummary() throws {
        let h = try RecipeHarness()
        h.runOK("""
        local s = export.jsonl("events.jsonl", { {b = 2, a = 1}, {x = 1.0, n = json.null, t = {1, 2}}, json.array{} })
        print(s.name, s.rows, s.bytes, s.path)
        """)
        let path = h.outFolder.appendingPathComponent("events.jsonl").path
        XCTAssertEqual(try h.exported("events.jsonl"), "{\"a\":1,\"b\":2}\n{\"n\":null,\"t\":[1,2],\"x\":1.0}\n[]\n")
        XCTAssertEqual(h.output.lines, ["events.jsonl\t3\t46\t\(path)"])
        XCTAssertEqual(h.exports.files, [ExportedFile(name: "events.jsonl", rows: 3, bytes: 46, path: path)])
        XCTAssertEqual(h.exports.summaryLine, "wrote 1 file to \(h.outFolder.path)")
    }

    func testIteratorFunctionIpairsPairsAndLists() throws {
        let h = try RecipeHarness()
        h.runOK("""
        local t = { {id = 1}, {id = 2}, {id = 3} }
        local i = 0
        export.jsonl("function.jsonl", function() i = i + 1; return t[i] end)
        export.jsonl("ipairs.jsonl", ipairs(t))
        export.jsonl("pairs.jsonl", pairs({ k = {id = 9} }))
        export.jsonl("list.jsonl", t)
        export.jsonl("wrapped.jsonl", coroutine.wrap(function() for _, r in ipairs(t) do coroutine.yield(r) end end))
        export.jsonl("empty.jsonl", {})
        """)
        let three = "{\"id\":1}\n{\"id\":2}\n{\"id\":3}\n"
        XCTAssertEqual(try h.exported("function.jsonl"), three)
        XCTAssertEqual(try h.exported("ipairs.jsonl"), three)
        XCTAssertEqual(try h.exported("pairs.jsonl"), "{\"id\":9}\n")
        XCTAssertEqual(try h.exported("list.jsonl"), three)
        XCTAssertEqual(try h.exported("wrapped.jsonl"), three)
        XCTAssertEqual(try h.exported("empty.jsonl"), "")
        XCTAssertEqual(h.exports.files.map(\.rows), [3, 3, 1, 3, 3, 0])
        XCTAssertEqual(h.exports.summaryLine, "wrote 6 files to \(h.outFolder.path)")
    }

    func testBadNamesAreRefusedWithTheExactMessage() throws {
        for name in ["../x", "a/b", "a\\\\b", ".", "..", ".hidden", "", String(repeating: "n", count: 201), "tab\\there"] {
            let h = try RecipeHarness()
            let message = h.runFailing("export.jsonl(\"\(name)\", {})")
            var shown = name.replacingOccurrences(of: "\t", with: "\\t")
            if name.count > 200 { shown = String(name.prefix(200)) + "…" }
            XCTAssertEqual(message, "recipes/test.lua:1: bad argument #1 to 'export.jsonl' (export names are plain file names like 'events.jsonl', got '\(shown)')", name)
        }
        let h = try RecipeHarness()
        XCTAssertEqual(h.runFailing("export.csv('../x', {})"),
                       "recipes/test.lua:1: bad argument #1 to 'export.csv' (export names are plain file names like 'users.csv', got '../x')")
        XCTAssertEqual(h.runFailing("export.jsonl(nil, {})"),
                       "recipes/test.lua:1: bad argument #1 to 'export.jsonl' (string expected, got nil)")
        XCTAssertFalse(FileManager.default.fileExists(atPath: h.outFolder.path), "nothing exported: no folder")
        XCTAssertEqual(h.runFailing("export.jsonl('a\\u{202E}lmth.exe', {})"),
                       "recipes/test.lua:1: bad argument #1 to 'export.jsonl' (export names are plain file names like 'events.jsonl', got 'a\\u{202E}lmth.exe')")
        h.runOK("export.jsonl(string.rep('n', 200), {}); export.csv('résumé 2026 (final).csv', {})")
    }

    func testTheSameNameTwiceInARunIsAnError() throws {
        let h = try RecipeHarness()
        let message = h.runFailing("""
        export.jsonl("a.jsonl", {})
        export.csv("a.jsonl", {})
        """)
        XCTAssertEqual(message, "recipes/test.lua:2: export.csv: 'a.jsonl' was already exported in this run; use another name")
    }

    func testRowsThatAreNotTablesAreErrorsNamingTheRow() throws {
        let h = try RecipeHarness()
        XCTAssertEqual(h.runFailing("export.csv('x.csv', { {a = 1}, {a = 2}, 'oops' })"),
                       "recipes/test.lua:1: export.csv: row 3 is a string, expected a table")
        XCTAssertEqual(h.runFailing("export.jsonl('y.jsonl', { json.null })"),
                       "recipes/test.lua:1: export.jsonl: row 1 is json.null, expected a table")
        XCTAssertEqual(h.runFailing("export.jsonl('z.jsonl', ipairs({ 5 }))"),
                       "recipes/test.lua:1: export.jsonl: row 1 is a number, expected a table")
        XCTAssertEqual(h.runFailing("export.jsonl('w.jsonl', { {f = print} })"),
                       "recipes/test.lua:1: export.jsonl: row 1: cannot convert a function value")
        XCTAssertEqual(h.runFailing("export.jsonl('v.jsonl', 42)"),
                       "recipes/test.lua:1: bad argument #2 to 'export.jsonl' (iterator function or list of rows expected, got number)")
        XCTAssertEqual(h.runFailing("export.jsonl('u.jsonl', {}, {columns = {'a'}})"),
                       "recipes/test.lua:1: bad argument #3 to 'export.jsonl' (export.jsonl takes no options)")
    }

    /// An export the run leaves unfinished keeps what it wrote, under a name that says
    /// so (`NAME.incomplete`), never as `NAME`; no temporary file stays.
    func testAFailedExportKeepsItsRowsMarkedIncompleteAndIteratorErrorsKeepTheirPosition() throws {
        let h = try RecipeHarness()
        let message = h.runFailing("""
        local n = 0
        export.jsonl("partial.jsonl", function()
          n = n + 1
          if n == 3 then error("source failed") end
          return {n = n}
        end)
        """)
        XCTAssertEqual(message, "recipes/test.lua:4: source failed")
        let left = try FileManager.default.contentsOfDirectory(atPath: h.outFolder.path)
        XCTAssertEqual(left, ["partial.jsonl.incomplete"], "the rows written so far, kept when the session finishes")
        let kept = h.outFolder.appendingPathComponent("partial.jsonl.incomplete")
        XCTAssertEqual(try String(contentsOf: kept, encoding: .utf8), "{\"n\":1}\n{\"n\":2}\n")
        var expected = ExportedFile(name: "partial.jsonl.incomplete", rows: 2, bytes: 16, path: kept.path)
        expected.incomplete = true
        XCTAssertEqual(h.exports.files, [expected])
        XCTAssertEqual(h.exports.incompleteFiles, [expected])
        XCTAssertNil(h.exports.summaryLine)

        // A later pass that completes the export replaces the incomplete copy.
        let again = try RecipeHarness(outFolder: h.outFolder)
        again.runOK("export.jsonl('partial.jsonl', { {n = 1}, {n = 2}, {n = 3} })")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: h.outFolder.path), ["partial.jsonl"])
    }

    func testFolderAndFilesArePrivate() throws {
        let h = try RecipeHarness()
        h.runOK("export.jsonl('p.jsonl', {})")
        let folder = try FileManager.default.attributesOfItem(atPath: h.outFolder.path)
        let file = try FileManager.default.attributesOfItem(atPath: h.outFolder.appendingPathComponent("p.jsonl").path)
        XCTAssertEqual((folder[.posixPermissions] as? NSNumber)?.intValue, 0o700)
        XCTAssertEqual((file[.posixPermissions] as? NSNumber)?.intValue, 0o600)
    }

    func testTwoHundredThousandRowsStreamInSmallMemory() throws {
        let h = try RecipeHarness()
        let report = h.runOK("""
        local i = 0
        local s = export.jsonl("big.jsonl", function()
          i = i + 1
          if i <= 200000 then return { id = i, email = "user" .. i .. "@example.com", active = i % 2 == 0 } end
        end)
        assert(s.rows == 200000)
        """)
        XCTAssertLessThan(report.memoryPeakBytes, 16 << 20, "peak \(report.memoryPeakBytes)")
        let file = h.exports.files.first
        XCTAssertEqual(file?.rows, 200_000)
        let size = try FileManager.default.attributesOfItem(atPath: file?.path ?? "")[.size] as? NSNumber
        XCTAssertEqual(size?.intValue, file?.bytes)
        let text = try h.exported("big.jsonl")
        XCTAssertTrue(text.hasSuffix("{\"active\":true,\"email\":\"user200000@example.com\",\"id\":200000}\n"))
    }
}
