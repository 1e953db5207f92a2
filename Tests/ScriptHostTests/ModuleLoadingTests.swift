import Foundation
import XCTest
import ScriptHost

/// `require` after a module failed (issue 8, class 7): the module is not left marked
/// as loading, so a retry reports the module's own error again, not a false cycle.
final class ModuleLoadingTests: RecipeTestCase {
    func testAFailedModuleCanBeRequiredAgainAndFailsTheSameWay() throws {
        try harness.write("broken.lua", #"error("broken module")"#)
        let printed = lines(#"""
        print(pcall(require, "broken"))
        print(pcall(require, "broken"))
        """#)
        XCTAssertEqual(printed.count, 2)
        for line in printed { XCTAssertTrue(line.hasPrefix("false\t") && line.hasSuffix("/broken.lua:1: broken module"), line) }
    }

    func testARealCycleIsStillACycleEveryTime() throws {
        try harness.write("a.lua", #"local b = require("b") return b"#)
        try harness.write("b.lua", #"local a = require("a") return a"#)
        let printed = lines(#"""
        print(pcall(require, "a"))
        print(pcall(require, "a"))
        print(pcall(require, "b"))
        """#)
        XCTAssertEqual(printed.count, 3)
        for (line, module) in zip(printed, ["a", "a", "b"]) {
            XCTAssertTrue(line.hasSuffix(".lua:1: require: module '\(module)' requires itself (a cycle)"), line)
        }
    }
}
