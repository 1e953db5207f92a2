import Foundation
import HubClient
import ScriptHost
import XCTest
import SystemText
@testable import RecipeModules
@testable import Runs
@testable import Configuration
@testable import RunJournal
@testable import Automation

/// One table maps the errors that stop a run outside its recipe to exit codes, for
/// `hubscript run`/`plan`/`apply` and for the fires of jobs and triggers alike.
final class RunExitCodeTests: XCTestCase {
    struct Unforeseen: Error, CustomStringConvertible { var description: String { "the disk went away" } }

    func testEveryKindOfStopHasItsCode() {
        let denied = HubGate.Denied(missing: ["entitlements:write"], profile: "prod")
        let notAllowed = NotAllowed(missing: ["entitlements:write"], allowed: AllowedPermissions(["orgs:read"], caller: "job \"nightly\""))
        let table: [(error: any Error, code: Int32)] = [
            (denied, 3),
            (HubGate.Denied(missing: [], profile: "prod", reason: .keyInactive(keyID: "k1", status: "revoked")), 3),
            (notAllowed, 3),
            (PlanRefusal("the plan is stale"), 4),
            (RunLock.Busy(runID: "run_1", pid: 42), 2),
            (HubConfigError("no profile named prod"), 2),
            (LibraryPinError(config: URL(fileURLWithPath: "/c/hubscript.lua"), lock: URL(fileURLWithPath: "/c/hubscript.lock"),
                             libraries: ["ops"], changes: nil), 2),
            (Unforeseen(), 2),
        ]
        for row in table {
            XCTAssertEqual(RunExitCode.of(row.error), row.code, "\(type(of: row.error))")
            XCTAssertEqual(FireResult(stoppedBy: row.error), FireResult(exitCode: row.code, message: "\(row.error)"))
        }
        XCTAssertEqual(FireResult(stoppedBy: Unforeseen()).message, "the disk went away")
        XCTAssertEqual([RunExitCode.usage, RunExitCode.capabilityDenied, RunExitCode.limit], [2, 3, 4])
    }

    func testAFireOfARecipeReportsItsFailureWithTheLocation() {
        func outcome(_ failure: ScriptFailure?) -> HubRunOutcome {
            HubRunOutcome(runID: "run_1", exitCode: failure?.exitCode ?? 0, report: nil, failure: failure, counts: RunCounts(),
                          plan: nil, warnings: [], exports: [], outputFolder: URL(fileURLWithPath: "/tmp"), masking: SecretRedactor())
        }
        XCTAssertEqual(FireResult(outcome(nil)), .succeeded)
        var located = ScriptFailure(kind: .runtime, message: "boom")
        located.location = "nightly.lua:3"
        XCTAssertEqual(FireResult(outcome(located)), FireResult(exitCode: 1, message: "nightly.lua:3: boom"))
        XCTAssertEqual(FireResult(outcome(ScriptFailure(kind: .limit(.host), message: "too slow"))), FireResult(exitCode: 4, message: "too slow"))
    }
}
