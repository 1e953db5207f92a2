import XCTest
import ScriptHost

/// Attacks on data-only states (configuration files and manifests: `LuaDataFile`,
/// `hs_open_data_sandbox` + `Prelude.dataSource`).
final class AttackDataOnlyTests: XCTestCase {
    /// Before today a data-only state opened the whole sandbox and then removed only the
    /// string metatable's `__index` (`hs_strip_string_methods`), so Lua's arithmetic on
    /// numeric strings (the string metatable's `__add`, `__unm`, … from lstrlib) kept
    /// working: `"10" + 1` was 11, as in any Lua 5.4. Now the string library is never
    /// opened, strings have no metatable at all, and the same file fails.
    /// TODAY: throws "cfg.lua:1: attempt to perform arithmetic on a string value (constant '10')".
    func testAttackArithmeticOnNumericStringsStillWorksInADataFile() throws {
        let value = try LuaDataFile.evaluate(source: #"return { port = "10" + 1, neg = -"2", product = "3" * "4" }"#,
                                             displayPath: "cfg.lua")
        XCTAssertEqual(value, ["port": .integer(11), "neg": .integer(-2), "product": .integer(12)])
    }
}
