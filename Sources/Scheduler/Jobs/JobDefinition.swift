import Foundation

/// One scheduled job: which recipe runs, with what, when, and what happens around it.
///
/// Every value is checked when the definition is made, so a definition that exists is
/// valid: the name matches `[a-z0-9][a-z0-9_-]{0,63}`, the recipe and any profile or
/// dispatch target are non-empty, the schedule parsed in its zone, `timeout` is positive
/// and `catchUp`'s bound is 1–1000. Errors name the job and the field.
public struct JobDefinition: Equatable, Sendable {
    /// The job's name: the `JOB` in its run ids.
    public let name: String
    /// The recipe to run (a path or name, resolved by the runner).
    public let recipe: String
    /// Parameters passed to the recipe.
    public let params: [String: JobParam]
    /// When it fires; carries the time zone (UTC unless the config names one).
    public let schedule: CronSchedule
    /// The profile to run under; nil for the config's default.
    public let profile: String?
    /// What happens to a fire while the previous run is still going (default `.skip`).
    public let overlap: OverlapPolicy
    /// What happens to fires missed while nothing ran (default `.none`).
    public let catchUp: CatchUpPolicy
    /// The run's wall-clock limit in seconds; nil for the recipe's own.
    public let timeout: Int?
    /// The Dispatch target told when a run fails (`on_failure = { dispatch = … }`).
    public let onFailureDispatch: String?
    /// The permissions the job's recipe may ask for (`allow = { "users.list", … }`): a
    /// manifest whose `needs` go beyond them is refused before it runs. nil: no bound
    /// beyond the profile's. Names are checked by the runner, which knows them.
    public let allow: [String]?

    /// The largest `catchUp` bound (`.all(max:)`) a definition accepts.
    public static let maxCatchUp = 1000

    /// A definition from Swift values; throws `.invalidJob` for a value out of bounds.
    public init(
        name: String, recipe: String, schedule: CronSchedule, params: [String: JobParam] = [:],
        profile: String? = nil, overlap: OverlapPolicy = .skip, catchUp: CatchUpPolicy = .none,
        timeout: Int? = nil, onFailureDispatch: String? = nil, allow: [String]? = nil
    ) throws {
        if let problem = Self.nameProblem(name) { throw SchedulerError(code: .invalidJob, message: problem) }
        func check(_ ok: Bool, _ problem: String) throws {
            if !ok { throw SchedulerError(code: .invalidJob, message: "job \"\(name)\": \(problem)") }
        }
        try check(!recipe.isEmpty, "recipe must not be empty")
        try check(profile != "", "profile must not be empty")
        try check(onFailureDispatch != "", "on_failure.dispatch must not be empty")
        if let timeout { try check(timeout > 0, "timeout must be a positive number of seconds, got \(timeout)") }
        if case .all(let max) = catchUp {
            try check((1...Self.maxCatchUp).contains(max), "catch_up.all must be 1-\(Self.maxCatchUp), got \(max)")
        }
        try check(!params.keys.contains(""), "params has an empty name")
        try check(!(allow ?? []).contains(""), "allow has an empty permission")
        self.name = name
        self.recipe = recipe
        self.schedule = schedule
        self.params = params
        self.profile = profile
        self.overlap = overlap
        self.catchUp = catchUp
        self.timeout = timeout
        self.onFailureDispatch = onFailureDispatch
        self.allow = allow
    }

    /// Why `name` is not a valid job name, or nil if it is.
    public static func nameProblem(_ name: String) -> String? {
        let bytes = Array(name.utf8)
        func allowed(_ b: UInt8, first: Bool) -> Bool {
            (0x61...0x7A).contains(b) || (0x30...0x39).contains(b) || (!first && (b == 0x5F || b == 0x2D))
        }
        guard (1...64).contains(bytes.count), allowed(bytes[0], first: true),
              bytes.dropFirst().allSatisfy({ allowed($0, first: false) }) else {
            return "job name \"\(name)\" is invalid: use 1-64 characters from a-z, 0-9, _ and -, "
                + "starting with a letter or digit"
        }
        return nil
    }
}
