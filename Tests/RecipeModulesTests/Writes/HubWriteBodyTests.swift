import Foundation
import HTTPKit
import HubSandbox
import JSONKit
import ScriptHost
import XCTest
@testable import HubClient
@testable import RunJournal
@testable import RecipeModules
@testable import Runs

/// A `hub` write's body from the recipe's table to the wire: converted once, its
/// canonical text pinned (the idempotency key and the journalled digest are derived
/// from it, so it must never drift), and the bytes sent are exactly the bytes the key
/// names.
final class HubWriteBodyTests: XCTestCase {
    /// The Hub's answer to every write in these tests; reads go to the sandbox.
    static let grantAnswer = #"{"application_id":"app_1","id":"ent_1","status":"active","version":1.0,"score":2.5}"#

    /// Sends reads to the sandbox and answers writes with `grantAnswer`, keeping what
    /// each write carried.
    final class Recorder: @unchecked Sendable {
        private let lock = NSLock()
        private var _writes: [(key: String?, contentType: String?, body: Data)] = []
        var writes: [(key: String?, contentType: String?, body: Data)] { lock.withLock { _writes } }

        func connection(_ h: GatingTests.Harness) throws -> HubConnection {
            let sandbox = h.sandbox
            let client = try HubClient(
                baseURL: URL(string: "http://127.0.0.1")!, credential: .apiKey(SandboxFixtures.jobsKeySecret),
                transport: InProcessTransport(handler: { [self] request in
                    guard request.method != "GET" else { return sandbox.handle(request) }
                    lock.withLock {
                        _writes.append((request.headers["Idempotency-Key"], request.headers["Content-Type"], request.body))
                    }
                    return HTTPResponseMessage(status: 201, headers: HTTPHeaders([("Content-Type", "application/json")]),
                                               body: Data(HubWriteBodyTests.grantAnswer.utf8))
                }),
                options: HubClientOptions(rateLimitPerMinute: 0, profileName: "jobs", apiKeyID: SandboxFixtures.jobsKeyId))
            return HubConnection(profileName: "jobs", client: client, notice: nil)
        }
    }

    static func recipe(_ body: String) -> String {
        """
        recipe {
          name = "grant",
          version = "1.0.0",
          description = "Test fixture.",
          needs = { "entitlements.manage" },
        }

        """ + body
    }

    /// Every kind of value a body can hold, in the grant binding: the canonical text has
    /// sorted keys, a float with no fraction as an integer (`2.0`, `-0.0`, `1e15`), an
    /// integer beyond ±9·10^15 as the float it rounds to, escapes only where JSON needs
    /// them, and `source` filled in by the binding.
    static let grantCall = #"""
        local e = hub.entitlements.grant("usr_ada", {
          application_id = "app_1", weight = 2.0, negative_zero = -0.0, e15 = 1e15, big = 9007199254740993,
          ratio = 0.5, huge = 1e300, note = "é\n\"/\t", tags = { "b", "a" }, meta = { z = 1, a = json.null },
        })
        print(e.id, math.type(e.version), e.version, math.type(e.score), e.score)
        """#
    static let grantCanonical = #"{"application_id":"app_1","big":9007199254740992.0,"e15":1000000000000000,"huge":1e+300,"meta":{"a":null,"z":1},"negative_zero":0,"note":"é\n\"/\t","ratio":0.5,"source":"admin_grant","tags":["b","a"],"weight":2}"#

    func testAGrantsBodyHasItsPinnedCanonicalTextKeyAndDigestAndIsSentAsThoseBytes() throws {
        let h = try GatingTests.Harness()
        let recorder = Recorder()
        let output = MemoryOutput()
        let outcome = try h.execute(try h.recipe("grant.lua", Self.recipe(Self.grantCall)), try recorder.connection(h), output: output)
        XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
        // The Hub's numbers as Lua sees them: a whole number is an integer (`1.0` too).
        XCTAssertEqual(output.lines, ["ent_1\tinteger\t1\tfloat\t2.5"])

        let key = IdempotencyKey.derive(runID: outcome.runID, method: "POST", path: "/users/usr_ada/entitlements",
                                        canonicalBody: Self.grantCanonical, occurrence: 0)
        XCTAssertEqual(recorder.writes.count, 1)
        XCTAssertEqual(recorder.writes.first?.key, key)
        XCTAssertEqual(recorder.writes.first?.contentType, "application/json")
        XCTAssertEqual(recorder.writes.first.map { String(decoding: $0.body, as: UTF8.self) }, Self.grantCanonical)
        let journalled = try h.journal.writes(runID: outcome.runID)
        XCTAssertEqual(journalled.map(\.key), [key])
        XCTAssertEqual(journalled.map(\.bodySHA256), [Digest.sha256Hex(Self.grantCanonical)])
        XCTAssertEqual(journalled.map(\.responseJSON),
                       [#"{"application_id":"app_1","id":"ent_1","score":2.5,"status":"active","version":1}"#])
    }

    func testTheGoldenGrantKeyForAFixedRun() {
        // The formula over the pinned text, for a run id a resume would carry: this key
        // is what every earlier release sent for this grant.
        XCTAssertEqual(IdempotencyKey.derive(runID: "run_20261130T142233Z_9f3a", method: "POST", path: "/users/usr_ada/entitlements",
                                             canonicalBody: Self.grantCanonical, occurrence: 0),
                       "hs1-01b8c93b4616e0c150e8cb43b1d34a7d2b79a618")
    }

    func testAPlannedGrantRecordsTheSameDigestAsALiveOne() throws {
        let h = try GatingTests.Harness()
        let recorder = Recorder()
        let outcome = try h.execute(try h.recipe("grant.lua", Self.recipe(Self.grantCall)), try recorder.connection(h)) {
            $0.mode = .plan
        }
        XCTAssertEqual(recorder.writes.count, 0)
        let planned = try XCTUnwrap(outcome.plan?.writes.first)
        XCTAssertEqual(planned.bodySHA256, Digest.sha256Hex(Self.grantCanonical))
        XCTAssertEqual(planned.key, IdempotencyKey.derive(runID: outcome.runID, method: "POST", path: "/users/usr_ada/entitlements",
                                                          canonicalBody: Self.grantCanonical, occurrence: 0))
    }

    func testABodyJSONCannotHoldIsInvalidBodyAndNothingIsSentOrJournalled() throws {
        for (value, shown) in [("1/0", "inf"), ("-1/0", "-inf"), ("0/0", "-nan")] {
            let h = try GatingTests.Harness()
            let recorder = Recorder()
            let output = MemoryOutput()
            let outcome = try h.execute(try h.recipe("grant.lua", Self.recipe("""
                local ok, err = pcall(hub.entitlements.grant, "usr_ada", { application_id = "app_1", weight = \(value) })
                print(ok, err.code, err.message)
                """)), try recorder.connection(h), output: output)
            XCTAssertNil(outcome.failure, outcome.failure?.message ?? "")
            XCTAssertEqual(output.lines, ["false\tinvalid_body\tcannot send argument #2 of hub.entitlements.grant as a body: cannot encode \(shown) (JSON has no NaN or infinity)"])
            XCTAssertEqual(recorder.writes.count, 0)
            XCTAssertEqual(try h.journal.writes(runID: outcome.runID).count, 0)
        }
    }
}
