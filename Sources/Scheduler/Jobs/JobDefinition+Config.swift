extension JobDefinition {
    /// The fields a job's config table may have.
    public static let configFields = [
        "recipe", "params", "schedule", "timezone", "profile", "overlap", "catch_up", "timeout", "on_failure", "allow",
    ]

    /// The job `name` from its table in the config file:
    ///
    /// ```lua
    /// jobs = { ["nightly-sync"] = {
    ///   recipe = "recipes/sync.lua", params = { group = "ops", tags = { "a", "b" } },
    ///   schedule = "30 2 * * *", timezone = "Europe/Berlin", profile = "prod",
    ///   overlap = "queue", catch_up = { all = 3 }, timeout = 600,
    ///   on_failure = { dispatch = "ops-pager" }, allow = { "users.list", "users.manage" },
    /// } }
    /// ```
    ///
    /// `recipe` and `schedule` are required; `timezone` defaults to UTC, `overlap` to
    /// "skip", `catch_up` ("none", "latest" or `{ all = N }`) to "none". Throws a
    /// `SchedulerError` whose message starts `job "NAME": ` and names the field; a bad
    /// schedule or zone keeps its own code (`.cronOutOfRange`, `.unknownTimeZone`, …),
    /// everything else is `.invalidJob`.
    public init(name: String, config: [String: JobConfigValue]) throws {
        if let problem = Self.nameProblem(name) { throw SchedulerError(code: .invalidJob, message: problem) }
        let reader = JobConfigReader(job: name, config: config)
        try reader.rejectUnknown(config.keys, known: Self.configFields, in: nil)
        let recipe = try reader.string("recipe", required: true)!
        let expression = try reader.string("schedule", required: true)!
        let zone = try reader.string("timezone") ?? "UTC"
        let schedule: CronSchedule
        do {
            schedule = try CronSchedule(expression, timeZone: zone)
        } catch let error as SchedulerError {
            let field = error.code == .unknownTimeZone ? "timezone" : "schedule"
            throw SchedulerError(code: error.code, message: "job \"\(name)\": \(field): \(error.message)")
        }
        try self.init(
            name: name, recipe: recipe, schedule: schedule, params: try reader.params(),
            profile: try reader.string("profile"), overlap: try reader.overlap(), catchUp: try reader.catchUp(),
            timeout: try reader.timeout(), onFailureDispatch: try reader.onFailure(), allow: try reader.allow())
    }
}

/// Reads one job's config table, field by field, with errors that name the job.
private struct JobConfigReader {
    let job: String
    let config: [String: JobConfigValue]

    func fail(_ problem: String) -> SchedulerError {
        SchedulerError(code: .invalidJob, message: "job \"\(job)\": \(problem)")
    }

    /// Refuses keys outside `known`, the first in sorted order.
    func rejectUnknown(_ keys: Dictionary<String, JobConfigValue>.Keys, known: [String], in table: String?) throws {
        guard let unknown = keys.filter({ !known.contains($0) }).sorted().first else { return }
        let place = table.map { "\($0) has unknown field" } ?? "unknown field"
        throw fail("\(place) \"\(unknown)\" (known: \(known.joined(separator: ", ")))")
    }

    func string(_ key: String, required: Bool = false) throws -> String? {
        switch config[key] {
        case nil:
            if required { throw fail("\(key) is required") }
            return nil
        case .string(let text)?:
            if text.isEmpty { throw fail("\(key) must not be empty") }
            return text
        case let other?:
            throw fail("\(key) must be a string, got \(other.configKind)")
        }
    }

    func params() throws -> [String: JobParam] {
        let table: [String: JobConfigValue]
        switch config["params"] {
        case nil, .array([])?: return [:]   // a Lua `{}` may arrive as an empty list
        case .object(let t)?: table = t
        case let other?: throw fail("params must be a table, got \(other.configKind)")
        }
        var params: [String: JobParam] = [:]
        for (key, value) in table.sorted(by: { $0.key < $1.key }) {
            switch value {
            case .string(let text):
                params[key] = .string(text)
            case .integer(let number):
                params[key] = .string(String(number))
            case .number(let number):
                params[key] = .string(String(number))
            case .bool(let flag):
                params[key] = .string(flag ? "true" : "false")
            case .array(let items):
                params[key] = .list(try items.enumerated().map { index, item in
                    guard case .string(let text) = item else {
                        throw fail("params.\(key)[\(index + 1)] must be a string, got \(item.configKind)")
                    }
                    return text
                })
            default:
                throw fail("params.\(key) must be a string, number, boolean or list of strings, got \(value.configKind)")
            }
        }
        return params
    }

    func overlap() throws -> OverlapPolicy {
        guard let text = try string("overlap") else { return .skip }
        guard let policy = OverlapPolicy(rawValue: text) else {
            throw fail("overlap must be \"skip\" or \"queue\", got \"\(text)\"")
        }
        return policy
    }

    func catchUp() throws -> CatchUpPolicy {
        let expected = "catch_up must be \"none\", \"latest\" or { all = N }"
        switch config["catch_up"] {
        case nil, .string("none")?: return .none
        case .string("latest")?: return .latest
        case .string(let text)?: throw fail("\(expected), got \"\(text)\"")
        case .object(let table)?:
            try rejectUnknown(table.keys, known: ["all"], in: "catch_up")
            switch table["all"] {
            case .integer(let max)?: return .all(max: Int(max))
            case nil: throw fail("\(expected), got a table without all")
            case let other?: throw fail("catch_up.all must be an integer, got \(other.configKind)")
            }
        case let other?: throw fail("\(expected), got \(other.configKind)")
        }
    }

    func timeout() throws -> Int? {
        switch config["timeout"] {
        case nil: return nil
        case .integer(let seconds)?: return Int(seconds)
        case let other?: throw fail("timeout must be an integer (seconds), got \(other.configKind)")
        }
    }

    /// `allow = { "users.list", … }`: a list of strings (`{}` allows nothing).
    func allow() throws -> [String]? {
        switch config["allow"] {
        case nil: return nil
        case .array(let items)?:
            return try items.enumerated().map { index, item in
                guard case .string(let text) = item else { throw fail("allow[\(index + 1)] must be a permission name (a string), got \(item.configKind)") }
                return text
            }
        case .object(let t)? where t.isEmpty: return []
        case let other?: throw fail("allow must be a list of permission names like { \"users.list\" }, got \(other.configKind)")
        }
    }

    func onFailure() throws -> String? {
        switch config["on_failure"] {
        case nil: return nil
        case .object(let table)?:
            try rejectUnknown(table.keys, known: ["dispatch"], in: "on_failure")
            switch table["dispatch"] {
            case .string(let target)?: return target
            case nil: throw fail("on_failure.dispatch is required")
            case let other?: throw fail("on_failure.dispatch must be a string, got \(other.configKind)")
            }
        case let other?: throw fail("on_failure must be a table like { dispatch = \"NAME\" }, got \(other.configKind)")
        }
    }
}
