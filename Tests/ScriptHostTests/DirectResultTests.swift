import XCTest
import ScriptHost

/// A binding's one scalar result goes back to Lua in the context, not through result
/// ops (HS_DIRECT_RESULT in shim.h): each kind must arrive exactly as the ops path
/// delivered it — one value, its Lua type and subtype, its bits.
final class DirectResultTests: RecipeTestCase {
    private func plugin() -> Plugin {
        Plugin(module: "scalars", functions: [
            ScriptFunction("int") { call in .value(.integer(try call.integer(1))) },
            ScriptFunction("min") { _ in .value(.integer(Int64.min)) },
            ScriptFunction("max") { _ in .value(.integer(Int64.max)) },
            ScriptFunction("num") { call in .value(.number(try call.number(1))) },
            ScriptFunction("negzero") { _ in .value(.number(-0.0)) },
            ScriptFunction("nan") { _ in .value(.number(.nan)) },
            ScriptFunction("inf") { _ in .value(.number(-.infinity)) },
            ScriptFunction("yes") { _ in .value(.bool(true)) },
            ScriptFunction("no") { _ in .value(.bool(false)) },
            ScriptFunction("none") { _ in .value(.nilValue) },
            ScriptFunction("nothing") { _ in .none },
        ])
    }

    func testEachScalarKindArrivesAsOneValueOfItsType() {
        harness.plugins.append(plugin())
        XCTAssertEqual(lines("""
            local s = scalars
            print(s.int(42), math.type(s.int(42)), select('#', s.int(7)))
            print(s.min() == math.mininteger, s.max() == math.maxinteger, math.type(s.min()))
            print(s.num(2.5), math.type(s.num(2.5)), 1 / s.negzero(), s.nan() ~= s.nan(), s.inf())
            print(s.yes(), s.no(), type(s.no()), select('#', s.no()))
            print(s.none(), select('#', s.none()), select('#', s.nothing()))
            local t = {}
            for i = 1, 1000 do t[i] = s.int(i) end
            print(#t, t[1000], math.type(t[1000]))
            """), [
                "42\tinteger\t1",
                "true\ttrue\tinteger",
                "2.5\tfloat\t-inf\ttrue\t-inf",
                "true\tfalse\tboolean\t1",
                "nil\t1\t0",
                "1000\t1000\tinteger",
            ])
    }

    /// Inside other expressions and across coroutines the value is the call's own.
    func testDirectResultsNestAndCrossCoroutines() {
        harness.plugins.append(plugin())
        XCTAssertEqual(lines("""
            local s = scalars
            local co = coroutine.wrap(function(n) coroutine.yield(s.int(n) + s.int(1)) return s.yes() end)
            print(co(41), co(), s.int(s.int(3)) * s.num(0.5))
            print(pcall(s.int, "x"))
            """), ["42\ttrue\t1.5", "false\tbad argument #1 to 'scalars.int' (number expected, got string)"])
    }
}
