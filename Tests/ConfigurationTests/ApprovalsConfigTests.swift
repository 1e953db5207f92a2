import Foundation
import HubClient
import ScriptHost
import XCTest
@testable import Configuration

/// The configuration's `approvals` rules: one rule or a list, each criterion it names
/// must match, the most demanding matching rule wins; every mistake is refused with the
/// key at fault and what to write.
final class ApprovalsConfigTests: XCTestCase {
    var folder: URL!
    var file: URL { folder.appendingPathComponent("config.lua") }

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-approvals-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws { try? FileManager.default.removeItem(at: folder) }

    func load(_ approvals: String) throws -> ApprovalsConfig {
        try """
            return { profiles = { production = { sandbox = true }, staging = { sandbox = true } }, approvals = \(approvals) }
            """.write(to: file, atomically: true, encoding: .utf8)
        return try LoadedConfiguration.load(explicit: file.path).approvals
    }

    func refusal(_ approvals: String) -> String {
        do { _ = try load(approvals); return "accepted" } catch { return "\(error)" }
    }

    func testOneRuleCoversEveryPlan() throws {
        let config = try load("{ required = 1 }")
        XCTAssertEqual(config.rules, [ApprovalsConfig.Rule(required: 1)])
        XCTAssertEqual(config.required(recipeNames: ["anything"], profile: "staging", permissions: [], writes: 0), 1)
        XCTAssertEqual(ApprovalsConfig.none.required(recipeNames: ["x"], profile: "p", permissions: ["users.manage"], writes: 9), 0)
    }

    func testEveryNamedCriterionMustMatchAndTheMostDemandingRuleWins() throws {
        let config = try load("""
            {
              { required = 1, profiles = { "production" } },
              { required = 2, profiles = { "production" }, min_writes = 100 },
              { required = 3, recipes = { "offboard" }, permissions = { "users.manage", "roles.manage" } },
            }
            """)
        func required(_ recipe: String, _ profile: String, _ permissions: [String], _ writes: Int) -> Int {
            config.required(recipeNames: ApprovalsConfig.recipeNames(path: "/r/\(recipe).lua"), profile: profile,
                            permissions: permissions, writes: writes)
        }
        XCTAssertEqual(required("sync", "staging", ["users.manage"], 500), 0)
        XCTAssertEqual(required("sync", "production", [], 99), 1)
        XCTAssertEqual(required("sync", "production", [], 100), 2)
        XCTAssertEqual(required("offboard", "staging", ["billing.manage"], 1), 0)
        XCTAssertEqual(required("offboard", "staging", ["roles.manage"], 1), 3)
        XCTAssertEqual(required("offboard", "production", ["users.manage"], 1000), 3)
    }

    func testMistakesAreRefusedNamingTheKey() {
        let at = "config \(file.path): "
        let usage = "approvals must be a rule such as { required = 1 } or a list of rules { { required = 1 }, "
            + "{ required = 2, profiles = { \"production\" } } }"
        XCTAssertEqual(refusal("2"), at + usage)
        XCTAssertEqual(refusal("\"yes\""), at + usage)
        XCTAssertEqual(refusal("{ 1, 2 }"), at + "approvals[1] must be a table like { required = 1 }; " + usage)
        XCTAssertEqual(refusal("{ required = 0 }"), at + "approvals.required must be a whole number of approvals from 1 to 10")
        XCTAssertEqual(refusal("{ required = 1.5 }"), at + "approvals.required must be a whole number of approvals from 1 to 10")
        XCTAssertEqual(refusal("{ required = 11 }"), at + "approvals.required must be a whole number of approvals from 1 to 10")
        XCTAssertEqual(refusal("{ profiles = { \"production\" } }"),
                       at + "approvals.required must be a whole number of approvals from 1 to 10")
        XCTAssertEqual(refusal("{ required = 1, requires = 2 }"),
                       at + "approvals: unknown key \"requires\" (a rule has required, recipes, profiles, permissions, min_writes)")
        XCTAssertEqual(refusal("{ { required = 1 }, { required = 2, profiles = { \"prod\" } } }"),
                       at + "approvals[2].profiles: \"prod\" is not one of the profiles (production, staging, or 'sandbox')")
        XCTAssertEqual(refusal("{ required = 1, profiles = \"production\" }"),
                       at + "approvals.profiles must be a non-empty list of profile names such as { \"production\" }")
        XCTAssertEqual(refusal("{ required = 1, recipes = {} }"),
                       at + "approvals.recipes must be a non-empty list of recipe names such as { \"offboard\" }")
        XCTAssertEqual(refusal("{ required = 1, permissions = { \"users.delete\" } }"),
                       at + "approvals.permissions: \"users.delete\" is not a platform permission ("
                        + Capabilities.allPermissions.joined(separator: ", ") + ")")
        XCTAssertEqual(refusal("{ required = 1, min_writes = 0 }"), at + "approvals.min_writes must be a whole number of writes, 1 or more")
        XCTAssertEqual(refusal("{ required = 1, min_writes = \"100\" }"), at + "approvals.min_writes must be a whole number of writes, 1 or more")
    }
}
