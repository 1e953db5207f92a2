import Foundation
import XCTest
import ScriptHost

/// `require` after a module failed: the module is not left marked
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

    func testAModuleFileOverTheSizeCapIsRefusedBeforeItIsRead() throws {
        let url = try harness.write("huge.lua", "")
        let handle = try FileHandle(forWritingTo: url)
        try handle.truncate(atOffset: UInt64(ModuleResolver.maxModuleBytes + 1))   // sparse: no disk used
        try handle.close()
        let outcome = harness.run(#"require("huge")"#)
        XCTAssertEqual(outcome.failure?.kind, .runtime)
        XCTAssertTrue(outcome.message.hasPrefix("recipes/t.lua:1: require: 'huge' ("), outcome.message)
        XCTAssertTrue(outcome.message.hasSuffix("huge.lua) is 8388609 bytes; a module may be at most 8 MiB"), outcome.message)
    }

    func testAFIFOPlantedAsAModuleIsRefusedWithoutBlocking() throws {
        let path = harness.folder.appendingPathComponent("pipe.lua").path
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        let outcome = runWithin(seconds: 20, #"require("pipe")"#)
        XCTAssertTrue(outcome?.message.hasSuffix("pipe.lua) is not a regular file") ?? false, outcome?.message ?? "")
    }
}
