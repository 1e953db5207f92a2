import Foundation
import ScriptHost
import XCTest

final class ExportCSVTests: XCTestCase {
    func testCellsQuotingAndHeaderFromColumns() throws {
        let h = try RecipeHarness()
        h.runOK(#"""
        local s = export.csv("users.csv", {
          { id = 1, email = "a@x", score = 1.0, active = true, note = 'say "hi", then\nleave' },
          { id = 2, email = "b,c@x", score = 2.5, active = false, note = json.null, extra = "ignored" },
          { id = 3, tags = {"x", "y"}, meta = {k = 1}, note = "cr\rhere" },
        }, { columns = {"id", "email", "score", "active", "note", "tags", "meta"} })
        print(s.rows, s.bytes)
        """#)
        let expected = "id,email,score,active,note,tags,meta\r\n"
            + "1,a@x,1.0,true,\"say \"\"hi\"\", then\nleave\",,\r\n"
            + "2,\"b,c@x\",2.5,false,,,\r\n"
            + "3,,,,\"cr\rhere\",\"[\"\"x\"\",\"\"y\"\"]\",\"{\"\"k\"\":1}\"\r\n"
        XCTAssertEqual(try h.exported("users.csv"), expected)
        XCTAssertEqual(h.output.lines, ["3\t\(expected.utf8.count)"])
    }

    func testHeaderFromTheSortedKeysOfTheFirstRow() throws {
        let h = try RecipeHarness()
        h.runOK(#"""
        export.csv("a.csv", { {b = 1, a = "x", c = 2}, {a = "y"} })
        export.csv("empty.csv", {})
        export.csv("header-only.csv", {}, {columns = {"id"}})
        """#)
        XCTAssertEqual(try h.exported("a.csv"), "a,b,c\r\nx,1,2\r\ny,,\r\n")
        XCTAssertEqual(try h.exported("empty.csv"), "")
        XCTAssertEqual(try h.exported("header-only.csv"), "id\r\n")
    }

    func testWithoutColumnsALaterRowWithANewKeyIsAnError() throws {
        let h = try RecipeHarness()
        XCTAssertEqual(h.runFailing(#"export.csv("a.csv", { {id = 1}, {id = 2, phone = "5"} })"#),
                       "recipes/test.lua:1: export.csv: row 2 has a field 'phone' that is not a column (the columns come from the first row's keys: id); pass {columns = {…}} to choose them")
    }

    func testExcelSafePrefixesFormulaLikeStringsOnly() throws {
        let h = try RecipeHarness()
        h.runOK(#"""
        local rows = { {v = "=SUM(A1)"}, {v = "+1"}, {v = "-x"}, {v = "@me"}, {v = -5}, {v = "plain"}, {v = "=a,b"} }
        export.csv("safe.csv", rows, {columns = {"v"}, excel_safe = true})
        export.csv("raw.csv", rows, {columns = {"v"}})
        """#)
        XCTAssertEqual(try h.exported("safe.csv"), "v\r\n'=SUM(A1)\r\n'+1\r\n'-x\r\n'@me\r\n-5\r\nplain\r\n\"'=a,b\"\r\n")
        XCTAssertEqual(try h.exported("raw.csv"), "v\r\n=SUM(A1)\r\n+1\r\n-x\r\n@me\r\n-5\r\nplain\r\n\"=a,b\"\r\n")
    }

    func testOptionsAndCellErrors() throws {
        let h = try RecipeHarness()
        XCTAssertEqual(h.runFailing("export.csv('a.csv', {}, {colums = {'a'}})"),
                       "recipes/test.lua:1: bad argument #3 to 'export.csv' (unknown option 'colums'; the options are columns and excel_safe)")
        XCTAssertEqual(h.runFailing("export.csv('b.csv', {}, {columns = {}})"),
                       "recipes/test.lua:1: bad argument #3 to 'export.csv' (columns must be a non-empty list of strings)")
        XCTAssertEqual(h.runFailing("export.csv('c.csv', {}, {columns = {'a', 'a'}})"),
                       "recipes/test.lua:1: bad argument #3 to 'export.csv' (columns lists 'a' twice)")
        XCTAssertEqual(h.runFailing("export.csv('d.csv', { {a = print} }, {columns = {'a'}})"),
                       "recipes/test.lua:1: export.csv: row 1: cannot convert a function value")
        XCTAssertEqual(h.runFailing("export.csv('e.csv', { {1, 2} })"),
                       "recipes/test.lua:1: export.csv: row 1 is a list; CSV rows are tables keyed by column name")
    }

    func testIteratorFormsWithOptions() throws {
        let h = try RecipeHarness()
        h.runOK(#"""
        local t = { {id = 1, x = "a"}, {id = 2, x = "b"} }
        local i = 0
        export.csv("f.csv", function() i = i + 1; return t[i] end, {columns = {"x"}})
        export.csv("ip.csv", ipairs(t))
        export.csv("list-opts.csv", t, {columns = {"id"}})
        """#)
        XCTAssertEqual(try h.exported("f.csv"), "x\r\na\r\nb\r\n")
        XCTAssertEqual(try h.exported("ip.csv"), "id,x\r\n1,a\r\n2,b\r\n")
        XCTAssertEqual(try h.exported("list-opts.csv"), "id\r\n1\r\n2\r\n")
        XCTAssertEqual(h.runFailing("export.csv('x.csv', ipairs({}), {columns = {'id'}})"),
                       "recipes/test.lua:1: bad argument #2 to 'export.csv' (ipairs(t) or pairs(t) must be the last argument; to pass options, pass the list itself: export.csv(name, t, options))")
    }
}
