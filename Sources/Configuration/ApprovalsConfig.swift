import Foundation
import HubClient
import ScriptHost

/// The configuration file's `approvals` key: which saved plans need how many people's
/// approval before `hubscript apply` sends them (docs/approvals.md).
///
/// ```lua
/// approvals = { required = 1 }                          -- every plan: one approval
/// approvals = {                                         -- several rules
///   { required = 1 },
///   { required = 2, profiles = { "production" }, min_writes = 100 },
///   { required = 2, recipes = { "offboard" }, permissions = { "users.manage" } },
/// }
/// ```
///
/// Contracts: a rule is a table with `required` (an integer from 1 to 10) and any of
/// `recipes` (recipe names: a file's name without `.lua`, or `LIB:RECIPE`), `profiles`
/// (profile names, or `sandbox`), `permissions` (platform permissions: the rule matches
/// a plan needing any of them) and `min_writes` (an integer ≥ 1: a plan of at least that
/// many writes). A rule matches a plan when every criterion it names matches; a rule
/// naming none matches every plan. The most demanding matching rule wins (the largest
/// `required`); no matching rule means no approval is needed. Any other key, or a value
/// of the wrong type, stops every command with a message naming it.
public struct ApprovalsConfig: Sendable, Equatable {
    public struct Rule: Sendable, Equatable {
        public var required: Int
        public var recipes: [String]?
        public var profiles: [String]?
        public var permissions: [String]?
        public var minWrites: Int?

        public init(required: Int, recipes: [String]? = nil, profiles: [String]? = nil, permissions: [String]? = nil,
                    minWrites: Int? = nil) {
            self.required = required
            self.recipes = recipes
            self.profiles = profiles
            self.permissions = permissions
            self.minWrites = minWrites
        }

        /// Whether the rule applies to a plan of `recipe` (its names: file name without
        /// `.lua`, and `LIB:RECIPE` when it came from a library) made with `profile`,
        /// needing `permissions`, of `writes` writes.
        public func matches(recipeNames: [String], profile: String, permissions needed: [String], writes: Int) -> Bool {
            if let recipes, !recipes.contains(where: recipeNames.contains) { return false }
            if let profiles, !profiles.contains(profile) { return false }
            if let permissions, !permissions.contains(where: needed.contains) { return false }
            if let minWrites, writes < minWrites { return false }
            return true
        }
    }

    public let rules: [Rule]

    public init(rules: [Rule]) { self.rules = rules }

    public static let none = ApprovalsConfig(rules: [])

    /// The approvals a plan needs: the largest `required` of the rules that match, 0 when none does.
    public func required(recipeNames: [String], profile: String, permissions: [String], writes: Int) -> Int {
        rules.filter { $0.matches(recipeNames: recipeNames, profile: profile, permissions: permissions, writes: writes) }
            .map(\.required).max() ?? 0
    }

    /// The names a rule's `recipes` can give the recipe at `path`: its file name without
    /// `.lua`, and `library` (`LIB:RECIPE`) when given.
    public static func recipeNames(path: String, library: String? = nil) -> [String] {
        var name = URL(fileURLWithPath: path).lastPathComponent
        if name.hasSuffix(".lua") { name.removeLast(4) }
        return [name] + (library.map { [$0] } ?? [])
    }

    static let ruleKeys = ["required", "recipes", "profiles", "permissions", "min_writes"]

    /// The file's `approvals` key; `.none` when it has none.
    static func parse(_ value: ScriptValue, file: URL, hub: HubConfig) throws -> ApprovalsConfig {
        guard case .object(let top) = value, let setting = top["approvals"] else { return .none }
        func fail(_ message: String) -> HubConfigError { HubConfigError("config \(file.path): \(message)") }
        let usage = "approvals must be a rule such as { required = 1 } or a list of rules { { required = 1 }, { required = 2, profiles = { \"production\" } } }"
        switch setting {
        case .object(let fields):
            return ApprovalsConfig(rules: [try rule(fields, at: "approvals", hub: hub, fail: fail)])
        case .array(let items):
            return ApprovalsConfig(rules: try items.enumerated().map { n, item in
                guard case .object(let fields) = item else { throw fail("approvals[\(n + 1)] must be a table like { required = 1 }; \(usage)") }
                return try rule(fields, at: "approvals[\(n + 1)]", hub: hub, fail: fail)
            })
        default:
            throw fail(usage)
        }
    }

    private static func rule(_ fields: [String: ScriptValue], at place: String, hub: HubConfig,
                             fail: (String) -> HubConfigError) throws -> Rule {
        for key in fields.keys.sorted() where !ruleKeys.contains(key) {
            throw fail("\(place): unknown key \"\(key)\" (a rule has \(ruleKeys.joined(separator: ", ")))")
        }
        guard case .integer(let required)? = fields["required"], (1...10).contains(required) else {
            throw fail("\(place).required must be a whole number of approvals from 1 to 10")
        }
        var rule = Rule(required: Int(required))
        rule.recipes = try names(fields["recipes"], at: "\(place).recipes", what: "recipe names such as { \"offboard\" }", fail: fail)
        rule.profiles = try names(fields["profiles"], at: "\(place).profiles", what: "profile names such as { \"production\" }", fail: fail)
        for profile in rule.profiles ?? [] where hub.profiles[profile] == nil && profile != HubConfig.builtinSandboxName {
            let known = hub.profiles.keys.sorted().joined(separator: ", ")
            throw fail("\(place).profiles: \"\(profile)\" is not one of the profiles (\(known.isEmpty ? "none" : known), or 'sandbox')")
        }
        rule.permissions = try names(fields["permissions"], at: "\(place).permissions",
                                     what: "platform permissions such as { \"users.manage\" }", fail: fail)
        for permission in rule.permissions ?? [] where !Capabilities.allPermissions.contains(permission) {
            throw fail("\(place).permissions: \"\(permission)\" is not a platform permission (\(Capabilities.allPermissions.joined(separator: ", ")))")
        }
        if let minWrites = fields["min_writes"] {
            guard case .integer(let n) = minWrites, n >= 1 else {
                throw fail("\(place).min_writes must be a whole number of writes, 1 or more")
            }
            rule.minWrites = Int(n)
        }
        return rule
    }

    private static func names(_ value: ScriptValue?, at place: String, what: String,
                              fail: (String) -> HubConfigError) throws -> [String]? {
        guard let value else { return nil }
        guard case .array(let items) = value, !items.isEmpty else { throw fail("\(place) must be a non-empty list of \(what)") }
        return try items.map { item in
            guard let text = item.stringValue, !text.isEmpty else { throw fail("\(place) must be a non-empty list of \(what)") }
            return text
        }
    }
}
