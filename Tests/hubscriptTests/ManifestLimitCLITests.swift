import Foundation
import XCTest

/// Manifest limits at the command line: limits out of range are
/// usage errors (exit 2) before anything runs, and a manifest that is slow to evaluate
/// cannot hang `run`, `check` or `describe`.
final class ManifestLimitCLITests: XCTestCase {
    private var cli: CLIHarness!

    override func setUpWithError() throws {
        try super.setUpWithError()
        cli = try CLIHarness(testCase: self)
    }

    override func tearDown() {
        cli = nil
        super.tearDown()
    }

    func testAHugeMemoryLimitIsRefusedWithItsRange() throws {
        try cli.file("big.lua", #"""
        recipe { name = "m", version = "1.0.0", description = "d", limits = { memory_mb = 17592186044416 } }
        print("ran")
        """#)
        assertResult(try cli.hubscript("run", "big.lua"), stdout: "",
                     stderr: "error: big.lua:1: manifest: limits.memory_mb must be an integer from 1 to 2048 (MiB)\n",
                     exitCode: 2)
    }

    func testASlowManifestEndsCheckDescribeAndRunWithinItsDeadline() throws {
        try cli.file("slow.lua", #"""
        recipe { name = "x", version = "1.0.0", description = (function()
          local s = "ab"
          for i = 1, 19 do s = s .. s end
          local t, u, n = s .. "x", s .. "y", 0
          for i = 1, 1e7 do if t == u then n = n + 1 end end
          return "d" end)() }
        print("body")
        """#)
        let message = "slow.lua: takes too long to evaluate (time limit); it must be plain data"
        assertResult(try cli.hubscript("describe", "slow.lua", timeout: 60), stdout: "", stderr: "error: \(message)\n", exitCode: 2)
        assertResult(try cli.hubscript("run", "slow.lua", "--timeout", "3", timeout: 60), stdout: "",
                     stderr: "error: \(message)\n", exitCode: 2)
        assertResult(try cli.hubscript("check", "slow.lua", timeout: 60), stdout: "FAIL slow.lua\n     \(message)\n",
                     stderr: "", exitCode: 1)
    }
}
