import Foundation
import SystemText
import HubClient
import ScriptHost
import RecipeModules

/// A trigger from the configuration file: Hub webhook event types → a recipe.
public struct ConfiguredTrigger: Sendable, Equatable {
    public let name: String
    /// Event types (`user.suspended`), prefixes (`role.*`) or `*`.
    public let on: [String]
    /// The recipe file, resolved against the config file's folder.
    public let recipe: URL
    public let profile: String?
    /// The vault entry holding the webhook's signing secret (`whsec_…`).
    public let secret: String
    /// The permissions the trigger's recipe may ask for (`allow = { … }`); nil: no
    /// bound beyond the profile's.
    public var allow: [String]? = nil
    /// `recipe = "LIB:RECIPE"`: a recipe of one of the configuration's libraries, found
    /// (and its pin checked) when the trigger runs; `recipe` is then meaningless.
    public var library: LibraryRecipe.Name? = nil

    /// Whether an event of `type` fires this trigger.
    public func matches(_ type: String) -> Bool {
        on.contains { pattern in
            pattern == "*" || pattern == type || (pattern.hasSuffix(".*") && type.hasPrefix(pattern.dropLast()))
        }
    }

    /// The run id of the trigger's run for `eventID`: `TRIGGER@<event id>`.
    public func runID(eventID: String) -> String { "\(name)@\(eventID)" }
}

/// The `triggers = { … }` table of the configuration file (docs/webhooks.md):
///
/// ```lua
/// triggers = {
///   offboarded = { on = {"user.suspended", "role.*"}, recipe = "recipes/on-suspend.lua",
///                  profile = "prod", secret = "webhooks/hub", allow = { "users.manage" } },
/// }
/// ```
public struct TriggersConfig: Sendable {
    public let source: URL?
    public let triggers: [ConfiguredTrigger]

    public init(source: URL?, triggers: [ConfiguredTrigger]) {
        self.source = source
        self.triggers = triggers.sorted { $0.name < $1.name }
    }

    /// The triggers an event of `type` fires.
    public func matching(_ type: String) -> [ConfiguredTrigger] { triggers.filter { $0.matches(type) } }
}

/// Reads the `triggers` table. Every message starts `config FILE: ` and names the
/// trigger and the key at fault.
struct TriggersConfigParser {
    let file: URL
    let hub: HubConfig

    static let keys = ["on", "recipe", "profile", "secret", "allow"]

    func fail(_ message: String) -> HubConfigError { HubConfigError("config \(file.path): \(message)") }

    func parse(_ value: ScriptValue) throws -> TriggersConfig {
        guard case .object(let top) = value, let triggers = top["triggers"] else { return TriggersConfig(source: file, triggers: []) }
        let table: [String: ScriptValue]
        switch triggers {
        case .object(let t): table = t
        case .array([]): table = [:]
        default: throw fail("triggers must be a table of name = { on = {…}, recipe = …, secret = … }")
        }
        let libraries = LibraryRecipe.names(in: value)
        return TriggersConfig(source: file, triggers: try table.keys.sorted().map { try trigger($0, table[$0]!, libraries: libraries) })
    }

    private func trigger(_ name: String, _ value: ScriptValue, libraries: [String]) throws -> ConfiguredTrigger {
        guard name.range(of: "^[A-Za-z0-9._-]{1,64}$", options: .regularExpression) != nil else {
            throw fail("trigger \"\(name)\": a trigger's name is 1 to 64 of A-Z a-z 0-9 . _ - (it starts its runs' ids)")
        }
        guard case .object(let fields) = value else {
            throw fail("trigger \"\(name)\" must be a table like { on = {\"user.suspended\"}, recipe = \"…\", secret = \"…\" }")
        }
        if let bad = fields.keys.sorted().first(where: { !Self.keys.contains($0) }) {
            throw fail("trigger \"\(name)\": unknown key '\(bad)' (allowed: \(Self.keys.joined(separator: ", ")))")
        }
        let events: [String]
        switch fields["on"] {
        case .array(let items)? where !items.isEmpty && items.allSatisfy({ $0.stringValue != nil }): events = items.compactMap(\.stringValue)
        case .string(let one)?: events = [one]
        default: throw fail("trigger \"\(name)\": on must be a non-empty list of event types, e.g. {\"user.suspended\", \"role.*\"}")
        }
        for pattern in events where pattern != "*" && pattern.range(of: "^[a-z_]+(\\.([a-z_]+|\\*))?$", options: .regularExpression) == nil {
            throw fail("trigger \"\(name)\": on: '\(pattern)' is not an event type (such as user.suspended), a prefix (role.*) or *")
        }
        guard let recipePath = fields["recipe"]?.stringValue, !recipePath.isEmpty else {
            throw fail("trigger \"\(name)\": recipe (a path relative to the config file) is required")
        }
        let recipe = URL(fileURLWithPath: recipePath, relativeTo: file.deletingLastPathComponent()).standardizedFileURL
        let library = try LibraryRecipe.configured(recipePath, file: recipe, libraries: libraries,
                                                   fail: { fail("trigger \"\(name)\": \($0)") })
        var isFolder: ObjCBool = false
        guard library != nil || FileManager.default.fileExists(atPath: recipe.path, isDirectory: &isFolder), !isFolder.boolValue else {
            throw fail("trigger \"\(name)\": recipe \"\(recipePath)\" is not a file (looked for \(recipe.path))")
        }
        var profile: String?
        if let p = fields["profile"] {
            guard let s = p.stringValue else { throw fail("trigger \"\(name)\": profile must be a string") }
            if hub.profiles[s] == nil, s != HubConfig.builtinSandboxName {
                let known = hub.profiles.keys.sorted().joined(separator: ", ")
                throw fail("trigger \"\(name)\": profile \"\(s)\" is not one of the profiles (\(known.isEmpty ? "none" : known), or 'sandbox')")
            }
            profile = s
        }
        guard let secret = fields["secret"]?.stringValue, !secret.isEmpty else {
            throw fail("trigger \"\(name)\": secret (the vault entry holding the webhook's signing secret, e.g. \"webhooks/hub\") is required")
        }
        var allow: [String]?
        switch fields["allow"] {
        case nil: break
        case .array(let items)? where items.allSatisfy({ $0.stringValue != nil }): allow = items.compactMap(\.stringValue)
        case .object(let t)? where t.isEmpty: allow = []
        default: throw fail("trigger \"\(name)\": allow must be a list of permission names, e.g. {\"users.list\"}")
        }
        if let allow, let problem = AllowedPermissions.problem(in: allow) { throw fail("trigger \"\(name)\": \(problem)") }
        return ConfiguredTrigger(name: name, on: events, recipe: recipe, profile: profile, secret: secret, allow: allow, library: library)
    }
}
