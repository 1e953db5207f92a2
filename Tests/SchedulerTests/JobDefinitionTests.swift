import Foundation
import Testing
@testable import Scheduler

@Suite("Job definitions")
struct JobDefinitionTests {
    let minimal: [String: JobConfigValue] = ["recipe": .string("recipes/sync.lua"), "schedule": .string("@daily")]

    func refusal(_ config: [String: JobConfigValue], name: String = "nightly") -> String {
        failure { _ = try JobDefinition(name: name, config: config) }
    }

    func with(_ key: String, _ value: JobConfigValue) -> [String: JobConfigValue] {
        minimal.merging([key: value]) { $1 }
    }

    @Test("every field, as the config loader hands them over")
    func full() throws {
        let job = try JobDefinition(name: "nightly-sync", config: [
            "recipe": .string("recipes/sync.lua"),
            "params": .object(["group": .string("ops"), "tags": .array([.string("a"), .string("b")])]),
            "schedule": .string("30 2 * * *"),
            "timezone": .string("Europe/Berlin"),
            "profile": .string("prod"),
            "overlap": .string("queue"),
            "catch_up": .object(["all": .integer(3)]),
            "timeout": .integer(600),
            "on_failure": .object(["dispatch": .string("ops-pager")]),
        ])
        #expect(job.name == "nightly-sync")
        #expect(job.recipe == "recipes/sync.lua")
        #expect(job.params == ["group": .string("ops"), "tags": .list(["a", "b"])])
        #expect(job.schedule == (try CronSchedule("30 2 * * *", timeZone: "Europe/Berlin")))
        #expect(job.schedule.timeZoneName == "Europe/Berlin")
        #expect(job.profile == "prod")
        #expect(job.overlap == .queue)
        #expect(job.catchUp == .all(max: 3))
        #expect(job.timeout == 600)
        #expect(job.onFailureDispatch == "ops-pager")
    }

    @Test("defaults: UTC, skip, no catch-up, no timeout, no profile, no params")
    func defaults() throws {
        let job = try JobDefinition(name: "n", config: minimal)
        #expect(job.schedule.timeZoneName == "UTC")
        #expect(job.overlap == .skip)
        #expect(job.catchUp == .none)
        #expect(job.timeout == nil && job.profile == nil && job.onFailureDispatch == nil)
        #expect(job.params.isEmpty)
        #expect(try JobDefinition(name: "n", config: with("params", .array([]))).params.isEmpty)
        #expect(try JobDefinition(name: "n", config: with("catch_up", .string("latest"))).catchUp == .latest)
        #expect(try JobDefinition(name: "n", config: with("catch_up", .string("none"))).catchUp == .none)
    }

    @Test("names: a-z, 0-9, _ and -, starting with a letter or digit, 1-64 long", arguments: [
        ("a", true), ("0", true), ("nightly_sync-2", true), (String(repeating: "x", count: 64), true),
        ("", false), ("-x", false), ("_x", false), ("Nightly", false), ("a b", false), ("a@b", false),
        ("é", false), (String(repeating: "x", count: 65), false),
    ])
    func names(name: String, valid: Bool) {
        #expect((JobDefinition.nameProblem(name) == nil) == valid)
    }

    @Test("an invalid name")
    func invalidName() {
        #expect(refusal(minimal, name: "Nightly Sync") == #"invalid_job: job name "Nightly Sync" is invalid: use 1-64 characters from a-z, 0-9, _ and -, starting with a letter or digit"#)
    }

    @Test("each field's errors name the job and the field", arguments: [
        (["schedule": .string("@daily")], #"invalid_job: job "nightly": recipe is required"#),
        (["recipe": .string("r.lua")], #"invalid_job: job "nightly": schedule is required"#),
        (["recipe": .integer(1), "schedule": .string("@daily")], #"invalid_job: job "nightly": recipe must be a string, got an integer"#),
        (["recipe": .string(""), "schedule": .string("@daily")], #"invalid_job: job "nightly": recipe must not be empty"#),
        (["recipe": .string("r.lua"), "schedule": .array([])], #"invalid_job: job "nightly": schedule must be a string, got a list"#),
        (["recipe": .string("r.lua"), "schedule": .string("@daily"), "schedul": .string("x"), "zzz": .bool(true)],
         #"invalid_job: job "nightly": unknown field "schedul" (known: recipe, params, schedule, timezone, profile, overlap, catch_up, timeout, on_failure, allow)"#),
    ] as [([String: JobConfigValue], String)])
    func requiredAndTyped(config: [String: JobConfigValue], message: String) {
        #expect(refusal(config) == message)
    }

    @Test("schedule and time zone errors keep their own code and quote the field")
    func scheduleErrors() {
        #expect(refusal(with("schedule", .string("61 * * * *")))
            == #"cron_out_of_range: job "nightly": schedule: cron "61 * * * *": minute 61 is out of range 0-59"#)
        #expect(refusal(with("timezone", .string("Mars/Olympus")))
            == #"unknown_time_zone: job "nightly": timezone: unknown time zone "Mars/Olympus": use a name from the tz database, such as "UTC", "Europe/Berlin" or "America/New_York""#)
        #expect(refusal(with("timezone", .bool(true))) == #"invalid_job: job "nightly": timezone must be a string, got a boolean"#)
    }

    @Test("params: numbers and booleans become their text, as --param would give them")
    func scalarParams() throws {
        let job = try JobDefinition(name: "n", config: with("params", .object([
            "days": .integer(30), "ratio": .number(0.5), "dry": .bool(false), "group": .string("ops"),
        ])))
        #expect(job.params == ["days": .string("30"), "ratio": .string("0.5"), "dry": .string("false"), "group": .string("ops")])
    }

    @Test("params: strings, numbers, booleans or lists of strings", arguments: [
        (JobConfigValue.string("x"), #"invalid_job: job "nightly": params must be a table, got a string"#),
        (.object(["groups": .array([.string("a"), .bool(true)])]), #"invalid_job: job "nightly": params.groups[2] must be a string, got a boolean"#),
        (.object(["nested": .object([:])]), #"invalid_job: job "nightly": params.nested must be a string, number, boolean or list of strings, got a table"#),
        (.object(["": .string("x")]), #"invalid_job: job "nightly": params has an empty name"#),
    ])
    func params(value: JobConfigValue, message: String) {
        #expect(refusal(with("params", value)) == message)
    }

    @Test("overlap, catch-up, timeout, profile and on_failure", arguments: [
        ("overlap", JobConfigValue.string("parallel"), #"invalid_job: job "nightly": overlap must be "skip" or "queue", got "parallel""#),
        ("catch_up", .string("all"), #"invalid_job: job "nightly": catch_up must be "none", "latest" or { all = N }, got "all""#),
        ("catch_up", .integer(3), #"invalid_job: job "nightly": catch_up must be "none", "latest" or { all = N }, got an integer"#),
        ("catch_up", .object(["max": .integer(3)]), #"invalid_job: job "nightly": catch_up has unknown field "max" (known: all)"#),
        ("catch_up", .object([:]), #"invalid_job: job "nightly": catch_up must be "none", "latest" or { all = N }, got a table without all"#),
        ("catch_up", .object(["all": .string("3")]), #"invalid_job: job "nightly": catch_up.all must be an integer, got a string"#),
        ("catch_up", .object(["all": .integer(0)]), #"invalid_job: job "nightly": catch_up.all must be 1-1000, got 0"#),
        ("catch_up", .object(["all": .integer(1001)]), #"invalid_job: job "nightly": catch_up.all must be 1-1000, got 1001"#),
        ("timeout", .integer(0), #"invalid_job: job "nightly": timeout must be a positive number of seconds, got 0"#),
        ("timeout", .string("10m"), #"invalid_job: job "nightly": timeout must be an integer (seconds), got a string"#),
        ("profile", .string(""), #"invalid_job: job "nightly": profile must not be empty"#),
        ("on_failure", .string("ops"), #"invalid_job: job "nightly": on_failure must be a table like { dispatch = "NAME" }, got a string"#),
        ("on_failure", .object([:]), #"invalid_job: job "nightly": on_failure.dispatch is required"#),
        ("on_failure", .object(["dispatch": .integer(1)]), #"invalid_job: job "nightly": on_failure.dispatch must be a string, got an integer"#),
        ("on_failure", .object(["dispatch": .string("")]), #"invalid_job: job "nightly": on_failure.dispatch must not be empty"#),
        ("on_failure", .object(["dispatch": .string("x"), "email": .string("y")]),
         #"invalid_job: job "nightly": on_failure has unknown field "email" (known: dispatch)"#),
        ("allow", .string("users.list"), #"invalid_job: job "nightly": allow must be a list of permission names like { "users.list" }, got a string"#),
        ("allow", .object(["x": .string("users.list")]), #"invalid_job: job "nightly": allow must be a list of permission names like { "users.list" }, got a table"#),
        ("allow", .array([.string("users.list"), .integer(1)]), #"invalid_job: job "nightly": allow[2] must be a permission name (a string), got an integer"#),
        ("allow", .array([.string("")]), #"invalid_job: job "nightly": allow has an empty permission"#),
    ])
    func policies(key: String, value: JobConfigValue, message: String) {
        #expect(refusal(with(key, value)) == message)
    }

    @Test("allow: a list of permission names; {} allows nothing")
    func allow() throws {
        #expect(try JobDefinition(name: "nightly", config: with("allow", .array([.string("users.list")]))).allow == ["users.list"])
        #expect(try JobDefinition(name: "nightly", config: with("allow", .array([]))).allow == [])
        #expect(try JobDefinition(name: "nightly", config: with("allow", .object([:]))).allow == [])
        #expect(try JobDefinition(name: "nightly", config: with("timeout", .integer(5))).allow == nil)
    }

    @Test("the Swift initializer checks the same bounds")
    func swiftInitializer() throws {
        let schedule = try CronSchedule("@hourly")
        #expect(failure { _ = try JobDefinition(name: "x", recipe: "r.lua", schedule: schedule, timeout: -5) }
            == #"invalid_job: job "x": timeout must be a positive number of seconds, got -5"#)
        #expect(failure { _ = try JobDefinition(name: "X", recipe: "r.lua", schedule: schedule) }.hasPrefix(#"invalid_job: job name "X" is invalid"#))
        let job = try JobDefinition(name: "x", recipe: "r.lua", schedule: schedule, catchUp: .latest)
        #expect(job.catchUp == .latest && job.overlap == .skip)
    }
}
