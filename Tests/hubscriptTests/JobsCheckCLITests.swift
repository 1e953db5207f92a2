import Foundation
import XCTest

/// `hubscript jobs check` and `hubscript check --config`: every job and trigger checked
/// against its recipe before it fires, every problem with the configuration's line.
final class JobsCheckCLITests: XCTestCase {
    static let report = """
        recipe {
          name = "report", description = "Inactive users report",
          params = { days = { type = "integer", default = 90 }, group = { type = "string", required = true } },
          needs = { "users.list", "users.manage" },
        }
        print(params.days)
        """

    static let hook = """
        recipe { name = "hook", params = { event = { type = "table" } }, needs = { "users.list" }, targets = { "ops" } }
        print(params.event.type)
        """

    var cli: CLIHarness!

    override func setUpWithError() throws {
        cli = try CLIHarness(testCase: self)
        try cli.file("recipes/report.lua", Self.report)
        try cli.file("recipes/hook.lua", Self.hook)
        try cli.file("recipes/broken.lua", "recipe { name = \"broken\", needs = { \"users.list\" } }\nfor x in do end\n")
    }

    /// Writes `hubscript.config.lua` (found in the folder the commands run in); returns its path.
    @discardableResult
    func config(_ text: String) throws -> String { try cli.file("hubscript.config.lua", text) }

    static let good = """
        return {
          profiles = { prod = { sandbox = true } },
          jobs = {
            nightly = { recipe = "recipes/report.lua", schedule = "@daily", params = { group = "ops", days = 30 },
                        allow = { "users.list", "users.manage" } },
          },
          triggers = {
            offboarded = { on = { "user.suspended" }, recipe = "recipes/hook.lua", secret = "webhooks/hub", allow = { "users.list" } },
          },
        }
        """

    func testAConfigurationThatPassesExitsZeroBothWays() throws {
        try config(Self.good)
        let expected = """
            ok   job nightly (recipes/report.lua)
            ok   trigger offboarded (recipes/hook.lua)
            2 passed, 0 failed

            """
        for args in [["jobs", "check"], ["check", "--config"], ["check", "--config", cli.root.appendingPathComponent("hubscript.config.lua").path]] {
            let r = try cli.run(args)
            XCTAssertEqual(r.status, 0, "\(args): \(r.output)")
            XCTAssertEqual(r.stdout, expected, "\(args)")
            XCTAssertEqual(r.stderr, "", "\(args)")
        }
    }

    func testEveryProblemOfEveryEntryWithTheConfigurationsLine() throws {
        let path = try config("""
            return {
              profiles = {
                prod = { sandbox = true },
              },
              jobs = {
                good = { recipe = "recipes/report.lua", schedule = "@daily", params = { group = "ops" } },
                ["weekly-report"] = {
                  recipe = "recipes/report.lua",
                  schedule = "0 25 * * *",
                  timezone = "Europe/Berln",
                  params = {
                    dayz = 3,
                  },
                  profile = "prdo",
                  allow = { "users.list" },
                  catch_up = "all",
                },
                broken = { recipe = "recipes/broken.lua", schedule = "@hourly", schedul = "x" },
                missing = { recipe = "recipes/nope.lua", schedule = "@hourly", on_failure = { dispatch = "pager" } },
                typed = { recipe = "recipes/report.lua", schedule = "@hourly", params = { days = "ninety", group = { "a", "b" } } },
              },
              triggers = {
                bad = { on = { "User" }, recipe = "recipes/report.lua", secret = "webhooks/hub" },
              },
            }
            """)
        let r = try cli.run(["jobs", "check"])
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertEqual(r.stderr, "")
        // Lua shortens a long file name in its messages (…-UUID/recipes/broken.lua).
        let stdout = r.stdout.replacingOccurrences(of: #"does not load: \S*/recipes/broken\.lua:"#, with: "does not load: …/recipes/broken.lua:",
                                                   options: .regularExpression)
        XCTAssertEqual(stdout, """
            FAIL job broken (recipes/broken.lua)
                 \(path):18: unknown field "schedul" (did you mean 'schedule'?) (known: recipe, params, schedule, timezone, profile, overlap, catch_up, timeout, on_failure, allow)
                 \(path):18: recipe "recipes/broken.lua" does not load: …/recipes/broken.lua:2: unexpected symbol near 'do'
            ok   job good (recipes/report.lua)
            FAIL job missing (recipes/nope.lua)
                 \(path):19: on_failure.dispatch: profile "pager" is not one of the profiles (prod, or 'sandbox')
                 \(path):19: recipe "recipes/nope.lua" is not a file (looked for \(cli.root.path)/recipes/nope.lua; a recipe path is relative to the configuration file's folder)
            FAIL job typed (recipes/report.lua)
                 \(path):20: params.days must be an integer (recipes/report.lua declares it integer), got 'ninety'
                 \(path):20: params.group is a list, but recipes/report.lua takes one string
            FAIL job weekly-report (recipes/report.lua)
                 \(path):9: schedule: cron "0 25 * * *": hour 25 is out of range 0-23
                 \(path):10: timezone: unknown time zone "Europe/Berln": use a name from the tz database, such as "UTC", "Europe/Berlin" or "America/New_York"
                 \(path):16: catch_up must be "none", "latest" or { all = N }, got "all"
                 \(path):14: profile "prdo" is not one of the profiles (did you mean 'prod'?) (prod, or 'sandbox')
                 \(path):12: params: unknown parameter 'dayz' (did you mean 'days'?) for recipes/report.lua (it takes: days, group)
                 \(path):7: params: missing required parameter 'group' (string) of recipes/report.lua; add it to the job's params
                 \(path):15: allow does not cover the recipe's needs: missing users.manage (allow: users.list); the recipe would be refused (exit 3). Add it to allow if the recipe should have it.
            FAIL trigger bad (recipes/report.lua)
                 \(path):23: on: 'User' is not an event type (such as user.suspended), a prefix (role.*) or *
                 \(path):23: recipe "recipes/report.lua" must declare params = { event = { type = "table" } }: a trigger's run gets the event as params.event
                 \(path):23: recipe "recipes/report.lua" requires parameter 'group', which a trigger cannot give (a trigger's run gets only params.event): give it a default
            1 passed, 5 failed

            """)
        // `check --config` is the same check.
        let same = try cli.run(["check", "--config"])
        XCTAssertEqual(same.status, 1)
        XCTAssertEqual(same.stdout, r.stdout)
    }

    func testTheIssuesExampleParamsTypoPassesJobsListButNotTheCheck() throws {
        let path = try config("""
            return {
              jobs = {
                weekly = { recipe = "recipes/report.lua", schedule = "@weekly",
                           params = { group = "ops", dayz = 3 } },
              },
            }
            """)
        XCTAssertEqual(try cli.run(["jobs", "list"]).status, 0)
        let r = try cli.run(["jobs", "check"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stdout, """
            FAIL job weekly (recipes/report.lua)
                 \(path):4: params: unknown parameter 'dayz' (did you mean 'days'?) for recipes/report.lua (it takes: days, group)
            0 passed, 1 failed

            """)
    }

    func testDispatchTargetsAndTheDefaultProfile() throws {
        let path = try config("""
            return {
              profiles = {
                prod = { hub_url = "https://hub.example.com", api_key_env = "HUB_KEY" },
                dev = { sandbox = true },
              },
              jobs = {
                pager = { recipe = "recipes/report.lua", schedule = "@daily", profile = "dev", params = { group = "g" },
                          on_failure = { dispatch = "prod" } },
                nodefault = { recipe = "recipes/report.lua", schedule = "@daily", params = { group = "g" } },
              },
              triggers = {
                hook = { on = "user.suspended", recipe = "recipes/hook.lua", secret = "webhooks/hub",
                         profile = "prod" },
              },
            }
            """)
        let r = try cli.run(["jobs", "check"])
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertEqual(r.stdout, """
            FAIL job nodefault (recipes/report.lua)
                 \(path):9: profile: \(path) has several profiles and no default_profile; pass --profile NAME
            FAIL job pager (recipes/report.lua)
                 \(path):8: on_failure.dispatch: profile 'prod' has no Dispatch: set dispatch_url and dispatch_token_ref in its configuration, or send through a configured target: dispatch.connect("NAME") with dispatch_targets in the configuration
            FAIL trigger hook (recipes/hook.lua)
                 \(path):13: recipe's targets: \(path) defines no Dispatch target 'ops' for profile 'prod' (targets: none): add dispatch_targets = { ops = { url = "https://…", token_ref = "dispatch/ops" } } at its top level or in the profile
            0 passed, 3 failed

            """)
        // With --profile, the entries without one take it (as their fires would).
        let chosen = try cli.run(["jobs", "check", "--profile", "dev"])
        XCTAssertTrue(chosen.stdout.contains("ok   job nodefault (recipes/report.lua)\n"), chosen.stdout)
    }

    func testJSONOneObjectPerEntryThenASummary() throws {
        try config(Self.good.replacingOccurrences(of: "group = \"ops\", days = 30", with: "days = 30"))
        let r = try cli.run(["jobs", "check", "--json"])
        XCTAssertEqual(r.status, 1, r.output)
        let objects = r.stdout.split(separator: "\n").compactMap {
            try? JSONSerialization.jsonObject(with: Data($0.utf8)) as? [String: Any]
        }
        XCTAssertEqual(objects.count, 3, r.stdout)
        XCTAssertEqual(objects[0]["type"] as? String, "config_check")
        XCTAssertEqual(objects[0]["kind"] as? String, "job")
        XCTAssertEqual(objects[0]["name"] as? String, "nightly")
        XCTAssertEqual(objects[0]["ok"] as? Bool, false)
        let problem = try XCTUnwrap((objects[0]["problems"] as? [[String: Any]])?.first)
        XCTAssertEqual(problem["line"] as? Int, 4)
        XCTAssertEqual(problem["message"] as? String,
                       "params: missing required parameter 'group' (string) of recipes/report.lua; add it to the job's params")
        XCTAssertEqual(objects[1]["kind"] as? String, "trigger")
        XCTAssertEqual(objects[1]["ok"] as? Bool, true)
        XCTAssertEqual(objects[2]["type"] as? String, "summary")
        XCTAssertEqual(objects[2]["exit_code"] as? Int, 1)
        XCTAssertEqual(objects[2]["passed"] as? Int, 1)
        XCTAssertEqual(objects[2]["failed"] as? Int, 1)
    }

    func testABrokenOrMissingConfigurationFile() throws {
        let path = try config("return { jobs = {\n")
        let r = try cli.run(["jobs", "check"])
        XCTAssertEqual(r.status, 1)
        XCTAssertEqual(r.stdout, "FAIL \(path)\n     \(path):2: unexpected symbol near <eof>\n")
        XCTAssertEqual(r.stderr, "")
        let profile = try config("return { profiles = { prod = { sandbox = true, bogus = 1 } } }\n")
        let p = try cli.run(["jobs", "check"])
        XCTAssertEqual(p.status, 1)
        XCTAssertTrue(p.stdout.hasPrefix("FAIL \(profile)\n     \(profile): unknown key 'bogus' in profiles.prod"), p.stdout)
        try FileManager.default.removeItem(atPath: path)
        let none = try cli.run(["jobs", "check"])
        XCTAssertEqual(none.status, 2)
        XCTAssertEqual(none.stdout, "")
        XCTAssertEqual(none.stderr, "hubscript jobs check: no configuration file was found: nothing to check (--config FILE, $HUBSCRIPT_CONFIG, ./hubscript.config.lua or ~/.config/hubscript/config.lua)\n")
        try config("return { profiles = { dev = { sandbox = true } } }\n")
        let empty = try cli.run(["jobs", "check"])
        XCTAssertEqual(empty.status, 0)
        XCTAssertEqual(empty.stdout, "no jobs or triggers in \(path)\n")
        let two = try cli.run(["check", "--config", "a.lua", "b.lua"])
        XCTAssertEqual(two.status, 2)
    }

    func testLibraryRecipesAreFoundAmongThePinnedLibraries() throws {
        try cli.file("shared/ops/offboard.lua", "recipe { name = \"offboard\", needs = { \"users.list\" } }\nprint('x')\n")
        let path = try config("""
            return {
              profiles = { dev = { sandbox = true } },
              libraries = { ops = "shared/ops" },
              jobs = {
                good = { recipe = "ops:offboard", schedule = "@daily" },
                typo = { recipe = "ops:ofboard", schedule = "@daily" },
              },
            }
            """)
        // Not trusted yet: the fire would refuse the library, so does the check.
        let untrusted = try cli.run(["jobs", "check"])
        XCTAssertEqual(untrusted.status, 1)
        XCTAssertTrue(untrusted.stdout.hasPrefix("FAIL job good (ops:offboard)\n     \(path):5: recipe \"ops:offboard\": "), untrusted.stdout)
        XCTAssertEqual(try cli.run(["trust"]).status, 0)
        let r = try cli.run(["jobs", "check"])
        XCTAssertEqual(r.status, 1, r.output)
        XCTAssertEqual(r.stdout, """
            ok   job good (ops:offboard)
            FAIL job typo (ops:ofboard)
                 \(path):6: library ops has no recipe 'ofboard' (recipes: offboard)
            1 passed, 1 failed

            """)
        // A library file changed since it was trusted.
        try cli.file("shared/ops/offboard.lua", "recipe { name = \"offboard\", needs = { \"users.list\" } }\nprint('changed')\n")
        let changed = try cli.run(["jobs", "check"])
        XCTAssertTrue(changed.stdout.hasPrefix("FAIL job good (ops:offboard)\n     \(path):5: recipe \"ops:offboard\": "), changed.stdout)
        XCTAssertEqual(try cli.run(["trust"]).status, 0)
        // A library that is not one of the configuration's.
        try config(try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: "ops:ofboard", with: "opz:offboard"))
        let unknown = try cli.run(["jobs", "check"])
        XCTAssertTrue(unknown.stdout.contains("""
            FAIL job typo (opz:offboard)
                 \(path):6: recipe "opz:offboard" names library 'opz', which is not one of the configuration's libraries (libraries: ops)
            """), unknown.stdout)
    }

    func testEntriesOfTheWrongShapeAreProblemsAndNamesReachTheTerminalEscaped() throws {
        let path = try config("""
            return {
              jobs = {
                a = "x",
                ["e\\27[31m"] = { recipe = "recipes/report.lua", schedule = 5, params = { group = "g" }, overlap = "always" },
              },
              triggers = { u = { on = { 1 }, recipe = 5, secret = "" } },
            }
            """)
        let r = try cli.run(["jobs", "check"])
        XCTAssertEqual(r.status, 1)
        XCTAssertFalse(r.stdout.contains("\u{1B}"), r.stdout)
        XCTAssertEqual(r.stdout, """
            FAIL job a
                 \(path):3: must be a table like { recipe = "…", schedule = "…" }
            FAIL job e\\e[31m (recipes/report.lua)
                 \(path): job name "e\\e[31m" is invalid: use 1-64 characters from a-z, 0-9, _ and -, starting with a letter or digit
                 \(path): schedule must be a string, got an integer
                 \(path): overlap must be "skip" or "queue", got "always"
            FAIL trigger u
                 \(path):6: on must be a non-empty list of event types, e.g. {"user.suspended", "role.*"}
                 \(path):6: secret (the vault entry holding the webhook's signing secret, e.g. "webhooks/hub") is required
                 \(path):6: recipe must be a path relative to the configuration file's folder, or LIB:RECIPE
            0 passed, 3 failed

            """)
    }
}
