import Foundation
import ScriptHost
import XCTest
import RecipeModules

final class CSVRowsTests: XCTestCase {
    /// Runs a recipe that prints every row of `path` as JSON; returns the printed lines.
    private func rows(_ h: RecipeHarness, _ path: String) -> [String] {
        h.allowedFiles = [path]
        h.runOK("for row in csv.rows('\(path)') do print(json.encode(row)) end")
        return h.output.lines
    }

    func testBOMCRLFQuotedNewlinesDoubledQuotesAndBlankLines() throws {
        let h = try RecipeHarness()
        let text = "\u{FEFF}id,email,note\r\n1,a@x,\"say \"\"hi\"\"\"\r\n\r\n2,\"b,c@x\",\"two\r\nlines\"\r\n\n3,c@x,\r\n"
        let path = try h.file("users.csv", text)
        XCTAssertEqual(rows(h, path), [
            #"{"email":"a@x","id":"1","note":"say \"hi\""}"#,
            #"{"email":"b,c@x","id":"2","note":"two\r\nlines"}"#,
            #"{"email":"c@x","id":"3","note":""}"#,
        ])
    }

    func testLFFilesFewerFieldsAreNilAndNoFinalNewline() throws {
        let h = try RecipeHarness()
        let path = try h.file("a.csv", "a,b,c\n1\n\"\",2\n4,5,6")
        XCTAssertEqual(rows(h, path), [#"{"a":"1"}"#, #"{"a":"","b":"2"}"#, #"{"a":"4","b":"5","c":"6"}"#])
    }

    func testLoneCRLineEndsEmptyAndHeaderOnlyFiles() throws {
        let h = try RecipeHarness()
        XCTAssertEqual(rows(h, try h.file("cr.csv", "a,b\rx,\"1\r2\"\ry,3\r")), [#"{"a":"x","b":"1\r2"}"#, #"{"a":"y","b":"3"}"#])
        for (name, text) in [("empty.csv", ""), ("bom.csv", "\u{FEFF}"), ("header.csv", "a,b\r\n"), ("blank.csv", "\n\n")] {
            let h = try RecipeHarness()
            XCTAssertEqual(rows(h, try h.file(name, text)), [], name)
        }
    }

    func testTheConvenienceFactoryAndARoundTripWithExportCSV() throws {
        let h = try RecipeHarness()
        h.runOK(#"export.csv("round.csv", { {id = 1, note = 'a "quoted", multi\nline'}, {id = 2, note = ""} })"#)
        let path = h.outFolder.appendingPathComponent("round.csv").path
        var configuration = RunConfiguration(output: h.output)
        configuration.plugins = [JSONPlugin.make(), CSVPlugin.make(allowedFiles: [path])]
        let recipe = RecipeFile(displayPath: "recipes/read.lua", url: h.root.appendingPathComponent("read.lua"),
                                source: "for row in csv.rows('\(path)') do print(json.encode(row)) end")
        XCTAssertNil(ScriptRuntime.run(recipe, configuration: configuration).failure)
        XCTAssertEqual(h.output.lines, [#"{"id":"1","note":"a \"quoted\", multi\nline"}"#, #"{"id":"2","note":""}"#])
    }

    func testTooManyFieldsNamesTheLine() throws {
        let h = try RecipeHarness()
        let path = try h.file("bad.csv", "id,email\n1,a\n\"multi\nline\",b\n2,b,extra\n")
        h.allowedFiles = [path]
        let message = h.runFailing("""
        local n = 0
        for row in csv.rows('\(path)') do
          n = n + 1
        end
        """)
        XCTAssertEqual(message, "recipes/test.lua:2: csv.rows: line 5 of '\(path)' has 3 fields, but the header has 2")
        XCTAssertEqual(h.csvSession?.openCount, 0)
    }

    func testInvalidUTF8AndUnclosedQuotesNameTheLine() throws {
        let h = try RecipeHarness()
        let path = try h.file("latin1.csv", Array("name\nok\n".utf8) + [0x4A, 0xE9, 0x72, 0x0A])
        h.allowedFiles = [path]
        XCTAssertEqual(h.runFailing("for row in csv.rows('\(path)') do end"),
                       "recipes/test.lua:1: csv.rows: line 3 of '\(path)' is not valid UTF-8 (save the file as UTF-8)")
        let unclosed = try h.file("unclosed.csv", "a\n\"open\nstill open\n")
        h.allowedFiles = [unclosed]
        XCTAssertEqual(h.runFailing("for row in csv.rows('\(unclosed)') do end"),
                       "recipes/test.lua:1: csv.rows: line 2 of '\(unclosed)': a quoted field is not closed before the end of the file")
    }

    func testOnlyDeclaredFileParamsCanBeOpened() throws {
        let h = try RecipeHarness()
        let allowed = try h.file("ok.csv", "a\n1\n")
        h.allowedFiles = [allowed]
        XCTAssertEqual(h.runFailing("for row in csv.rows('/etc/passwd') do end"),
                       #"recipes/test.lua:1: csv.rows: '/etc/passwd' is not a file parameter of this recipe (declare it in params with type = "file")"#)
        let sneaky = allowed.replacingOccurrences(of: "/ok.csv", with: "/../ok.csv")
        XCTAssertEqual(h.runFailing("for row in csv.rows('\(sneaky)') do end"),
                       #"recipes/test.lua:1: csv.rows: '\#(sneaky)' is not a file parameter of this recipe (declare it in params with type = "file")"#)
        XCTAssertEqual(h.runFailing("csv.rows(42)"), "recipes/test.lua:1: bad argument #1 to 'csv.rows' (string expected, got number)")
    }

    func testBreakingOutOfALoopClosesTheFileAndAtMost32AreOpen() throws {
        let h = try RecipeHarness()
        let path = try h.file("n.csv", "n\n1\n2\n3\n")
        h.allowedFiles = [path]
        h.runOK("""
        for i = 1, 100 do
          for row in csv.rows('\(path)') do break end
        end
        local iters = {}
        for i = 1, 32 do iters[i] = csv.rows('\(path)') end
        local ok, err = pcall(csv.rows, '\(path)')
        print(ok, err)
        """)
        XCTAssertEqual(h.output.lines, ["false\tcsv.rows: too many CSV files open at once (32); finish or leave earlier loops over csv.rows first"])
        XCTAssertEqual(h.csvSession?.openCount, 32)
        h.csvSession?.closeAll()
        XCTAssertEqual(h.csvSession?.openCount, 0)
    }

    func testAHundredThousandRowsIterateInSmallMemory() throws {
        let h = try RecipeHarness()
        let url = h.root.appendingPathComponent("big.csv")
        var text = "id,email,name\n"
        for i in 1...100_000 { text += "\(i),user\(i)@example.com,\"User, \(i)\"\n" }
        try Data(text.utf8).write(to: url)
        h.allowedFiles = [url.path]
        let report = h.runOK("""
        local n, sum = 0, 0
        for row in csv.rows('\(url.path)') do n = n + 1; sum = sum + tonumber(row.id) end
        print(n, sum)
        """)
        XCTAssertEqual(h.output.lines, ["100000\t5000050000"])
        XCTAssertLessThan(report.memoryPeakBytes, 16 << 20, "peak \(report.memoryPeakBytes)")
        XCTAssertEqual(h.csvSession?.openCount, 0)
    }
}
