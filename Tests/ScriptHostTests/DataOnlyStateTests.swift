import XCTest
import ScriptHost

/// Data-only states (configuration files and manifests: `LuaDataFile`,
/// `hs_open_data_sandbox` + `Prelude.dataSource`).
final class DataOnlyStateTests: XCTestCase {
    /// A configuration file is Lua, so it reads as Lua 5.4 reads it: arithmetic on numeric
    /// strings (the string metatable's `__add`, `__unm`, … from lstrlib) keeps working in a
    /// data-only state although its string methods are not reachable. Without the string
    /// metatable the same file would fail ("attempt to perform arithmetic on a string value").
    func testArithmeticOnNumericStringsStillWorksInADataFile() throws {
        let value = try LuaDataFile.evaluate(source: #"return { port = "10" + 1, neg = -"2", product = "3" * "4" }"#,
                                             displayPath: "cfg.lua")
        XCTAssertEqual(value, ["port": .integer(11), "neg": .integer(-2), "product": .integer(12)])
    }
}
