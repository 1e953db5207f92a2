import Foundation
import HubClient
import Scheduler
import XCTest
import Configuration

/// The config file's `jobs` table: every mistake names the job and the key.
final class JobsConfigTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-jobs-config-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder.appendingPathComponent("recipes"), withIntermediateDirectories: true)
        try "recipe { name = \"r\", version = \"1.0.0\", description = \"r\" }".write(
            to: folder.appendingPathComponent("recipes/r.lua"), atomically: true, encoding: .utf8)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func write(_ text: String, name: String = "config.lua") throws -> URL {
        let url = folder.appendingPathComponent(name)
        try text.write(to: url, atomically: true, encoding: .utf8)
        return url
    }

    func testJobsAreReadBesideTheProfiles() throws {
        let url = try write("""
            return {
              profiles = { prod = { sandbox = true } },
              jobs = {
                ["nightly-sync"] = { recipe = "recipes/r.lua", schedule = "30 2 * * *", timezone = "Europe/Berlin",
                                     profile = "prod", params = { group = "ops", days = 30, tags = { "a", "b" } },
                                     overlap = "queue", catch_up = { all = 3 }, timeout = 600,
                                     on_failure = { dispatch = "ops-pager" } },
                hourly = { recipe = "\(folder.appendingPathComponent("recipes/r.lua").path)", schedule = "@hourly",
                           catch_up = "latest" },
              },
            }
            """)
        let config = try LoadedConfiguration.load(explicit: url.path)
        XCTAssertEqual(config.hub.profiles.keys.sorted(), ["prod"])
        XCTAssertEqual(config.jobs.jobs.map(\.name), ["hourly", "nightly-sync"])
        let nightly = try config.jobs.job(named: "nightly-sync")
        XCTAssertEqual(nightly.recipe.path, folder.appendingPathComponent("recipes/r.lua").standardizedFileURL.path)
        XCTAssertEqual(nightly.definition.params, ["group": .string("ops"), "days": .string("30"), "tags": .list(["a", "b"])])
        XCTAssertEqual(nightly.definition.schedule, try CronSchedule("30 2 * * *", timeZone: "Europe/Berlin"))
        XCTAssertEqual(nightly.definition.overlap, .queue)
        XCTAssertEqual(nightly.definition.catchUp, .all(max: 3))
        XCTAssertEqual(nightly.definition.timeout, 600)
        XCTAssertEqual(nightly.definition.onFailureDispatch, "ops-pager")
        XCTAssertEqual(try config.jobs.job(named: "hourly").definition.catchUp, .latest)
        // The profiles alone, for every other command, ignore the jobs.
        XCTAssertEqual(try LoadedConfiguration.load(explicit: url.path).hub.profiles.keys.sorted(), ["prod"])
        XCTAssertThrowsError(try config.jobs.job(named: "weekly")) { error in
            XCTAssertEqual("\(error)", "no job 'weekly' in \(url.path) (jobs: hourly, nightly-sync)")
        }
    }

    func testNoConfigurationMeansNoJobs() throws {
        let config = try LoadedConfiguration.load(explicit: nil, environment: ["HOME": folder.path], currentDirectory: folder.path)
        XCTAssertNil(config.jobs.source)
        XCTAssertTrue(config.jobs.jobs.isEmpty)
    }

    func testMistakesNameTheJobAndTheKey() throws {
        let recipe = #"recipe = "recipes/r.lua""#
        let missing = folder.appendingPathComponent("recipes/nope.lua").path
        let cases: [(String, String)] = [
            (#"jobs = "nightly""#, "jobs must be a table of name = { recipe = …, schedule = … }"),
            (#"jobs = { nightly = "recipes/r.lua" }"#, #"job "nightly" must be a table like { recipe = "…", schedule = "…" }"#),
            (#"jobs = { Nightly = { \#(recipe), schedule = "@daily" } }"#,
             #"job name "Nightly" is invalid: use 1-64 characters from a-z, 0-9, _ and -, starting with a letter or digit"#),
            (#"jobs = { nightly = { \#(recipe) } }"#, #"job "nightly": schedule is required"#),
            (#"jobs = { nightly = { \#(recipe), schedul = "@daily" } }"#,
             #"job "nightly": unknown field "schedul" (known: recipe, params, schedule, timezone, profile, overlap, catch_up, timeout, on_failure, allow)"#),
            (#"jobs = { nightly = { \#(recipe), schedule = "61 * * * *" } }"#,
             #"job "nightly": schedule: cron "61 * * * *": minute 61 is out of range 0-59"#),
            (#"jobs = { nightly = { \#(recipe), schedule = "@daily", timezone = "Europe/Berlln" } }"#,
             #"job "nightly": timezone: unknown time zone "Europe/Berlln": use a name from the tz database, such as "UTC", "Europe/Berlin" or "America/New_York""#),
            (#"jobs = { nightly = { \#(recipe), schedule = "@daily", overlap = "parallel" } }"#,
             #"job "nightly": overlap must be "skip" or "queue", got "parallel""#),
            (#"jobs = { nightly = { \#(recipe), schedule = "@daily", catch_up = { all = 0 } } }"#,
             #"job "nightly": catch_up.all must be 1-1000, got 0"#),
            (#"jobs = { nightly = { \#(recipe), schedule = "@daily", timeout = 1.5 } }"#,
             #"job "nightly": timeout must be an integer (seconds), got a number"#),
            (#"jobs = { nightly = { \#(recipe), schedule = "@daily", on_failure = "ops" } }"#,
             #"job "nightly": on_failure must be a table like { dispatch = "NAME" }, got a string"#),
            (#"jobs = { nightly = { \#(recipe), schedule = "@daily", params = { n = { x = 1 } } } }"#,
             #"job "nightly": params.n must be a string, number, boolean or list of strings, got a table"#),
            (#"jobs = { nightly = { \#(recipe), schedule = "@daily", profile = "prod" } }"#,
             #"job "nightly": profile "prod" is not one of the profiles (dev, or 'sandbox')"#),
            (#"jobs = { nightly = { recipe = "recipes/nope.lua", schedule = "@daily" } }"#,
             #"job "nightly": recipe "recipes/nope.lua" is not a file (looked for \#(missing); a recipe path is relative to the config file's folder)"#),
        ]
        for (jobs, message) in cases {
            let url = try write("return { profiles = { dev = { sandbox = true } }, \(jobs) }")
            XCTAssertThrowsError(try LoadedConfiguration.load(explicit: url.path), jobs) { error in
                XCTAssertEqual("\(error)", "config \(url.path): \(message)")
            }
        }
    }
}
