import XCTest
import ScriptHost

/// `json.null` is a table, so it is truthy in Lua; `json.isnull(v)` is the test for it.
final class JSONNullTests: RecipeTestCase {
    func testNullIsTruthySoIsNullIsTheTest() {
        XCTAssertEqual(lines("""
            local v = json.decode('{"a":null}').a
            print(v and "truthy" or "falsy", json.isnull(v), v == json.null)
            """), ["truthy\ttrue\ttrue"])
    }

    func testIsNullIsTrueOnlyForJSONNull() {
        XCTAssertEqual(lines("""
            local out = {}
            for _, v in ipairs { false, 0, "", "null", {}, json.array{} } do out[#out + 1] = tostring(json.isnull(v)) end
            out[#out + 1] = tostring(json.isnull(nil))
            out[#out + 1] = tostring(json.isnull())
            out[#out + 1] = tostring(json.isnull(json.decode("null")))
            out[#out + 1] = tostring(json.isnull(json.decode("[null]")[1]))
            print(table.concat(out, " "))
            """), ["false false false false false false false false true true"])
    }

    func testAnEqualityMetamethodCannotPassForNull() {
        // rawequal: a table whose __eq answers true is still not json.null.
        XCTAssertEqual(lines("""
            local mt = { __eq = function() return true end }
            local fake = setmetatable({}, mt)
            print(json.isnull(fake))
            """), ["false"])
    }
}
