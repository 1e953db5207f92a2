import Foundation
import XCTest
import ScriptHost

/// `recipes/lib/util.lua`, the helpers of the shipped recipes, loaded as they load it
/// (`require("lib.util")` with the recipes folder searched), with a fixed clock.
final class RecipeUtilTests: RecipeTestCase {
    override func setUp() {
        super.setUp()
        let recipes = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("recipes")
        harness.libraryFolders = [recipes]
        harness.plugins = [JSONPlugin.make(), TimePlugin.make(now: { 1_796_100_967 })]   // 2026-12-01T04:56:07Z
    }

    private func util(_ body: String, file: StaticString = #filePath, line: UInt = #line) -> [String] {
        lines("local util = require(\"lib.util\")\n" + body, file: file, line: line)
    }

    func testIsNullValueAndFieldTreatJSONNullAsAbsent() {
        XCTAssertEqual(util("""
            local e = json.decode('{"a":null,"b":false,"c":{"d":null,"e":1},"n":null}')
            print(util.isnull(e.a), util.isnull(e.missing), util.isnull(e.b), util.isnull(0), util.isnull(""))
            print(util.value(e.a), util.value(e.b), util.field(e.c, "d"), util.field(e.c, "e"), util.field(e.n, "x"), util.field("s", "x"))
            """), ["true\ttrue\tfalse\tfalse\tfalse", "nil\tfalse\tnil\t1\tnil\tnil"])
    }

    func testTimestampNormalisesToUTCAndRefusesWhatIsNotATime() {
        XCTAssertEqual(util("""
            for _, s in ipairs { "2026-11-01", " 2026-11-01T08:30:00Z ", "2026-11-01 08:30:00+02:00",
                                 "2024-02-29T23:59:59.5-01:00" } do
              print(util.timestamp(s))
            end
            for _, s in ipairs { "", "yesterday", "2026-02-29", "2026-11-01T08:30", "2026-11-01T08:30:00" } do
              print(util.timestamp(s))
            end
            """), ["2026-11-01T00:00:00Z", "2026-11-01T08:30:00Z", "2026-11-01T06:30:00Z", "2024-03-01T00:59:59.5Z",
                   "nil\tempty",
                   "nil\tYYYY-MM-DD or YYYY-MM-DDThh:mm:ss with Z or ±hh:mm, a real date and time",
                   "nil\tYYYY-MM-DD or YYYY-MM-DDThh:mm:ss with Z or ±hh:mm, a real date and time",
                   "nil\tYYYY-MM-DD or YYYY-MM-DDThh:mm:ss with Z or ±hh:mm, a real date and time",
                   "nil\tYYYY-MM-DD or YYYY-MM-DDThh:mm:ss with Z or ±hh:mm, a real date and time"])
    }

    func testCountAndChunkReadAnIterator() {
        XCTAssertEqual(util("""
            local function upto(n)
              local i = 0
              return function() i = i + 1; if i <= n then return i end end
            end
            print(util.count(upto(0)), util.count(upto(7)))
            local sizes = {}
            for batch in util.chunk(upto(7), 3) do sizes[#sizes + 1] = table.concat(batch, "+") end
            print(table.concat(sizes, " "))
            local none = 0
            for _ in util.chunk(upto(0), 3) do none = none + 1 end
            print(none, #util.chunk(upto(3), 3)(), pcall(util.chunk, upto(1), 0))
            """), ["0\t7", "1+2+3 4+5+6 7", "0\t3\tfalse\tutil.chunk: size must be a positive integer, got 0"])
    }

    func testKeysCountsAndDaysSince() {
        XCTAssertEqual(util("""
            print(table.concat(util.keys { b = 1, a = 2, c = 3 }, " "), util.counts { expired = 12, active = 89, disabled = 19 })
            print(util.counts {} == "", util.days_since("2026-11-30T04:56:08Z"), util.days_since("2026-11-30T04:56:07Z"),
                  util.days_since("2026-12-03T00:00:00Z"))
            """), ["a b c\tactive 89, disabled 19, expired 12", "true\t0\t1\t-2"])
    }
}
