import Foundation
import HubClient
import ScriptHost
import RecipeModules

extension EntryContext {
    /// Checks trigger `name` (its table `value`): its fields as `TriggersConfigParser`
    /// reads them, then its recipe as an event's run would (it takes `params.event`, a
    /// `table`, and nothing else required).
    func trigger(_ name: String, _ value: ScriptValue) -> ConfigurationCheck.Entry {
        var problems: [Problem] = []
        func add(_ message: String, field: String? = nil) {
            let line = field.flatMap { lines.field($0, of: name, in: "triggers") } ?? lines.entry(name, in: "triggers")
            problems.append(Problem(line: line, message: message))
        }
        func entry(recipe: String? = nil) -> ConfigurationCheck.Entry {
            ConfigurationCheck.Entry(kind: .trigger, name: name, recipe: recipe, problems: problems)
        }
        if name.range(of: "^[A-Za-z0-9._-]{1,64}$", options: .regularExpression) == nil {
            add("a trigger's name is 1 to 64 of A-Z a-z 0-9 . _ - (it starts its runs' ids)")
        }
        guard case .object(let fields) = value else {
            add("must be a table like { on = {\"user.suspended\"}, recipe = \"…\", secret = \"…\" }")
            return entry()
        }
        let keys = TriggersConfigParser.keys
        for key in fields.keys.sorted() where !keys.contains(key) {
            add("unknown key '\(key)'\(DidYouMean.hint(for: key, among: keys)) (allowed: \(keys.joined(separator: ", ")))", field: key)
        }
        switch fields["on"] {
        case .array(let items)? where !items.isEmpty && items.allSatisfy({ $0.stringValue != nil }):
            checkEvents(items.compactMap(\.stringValue))
        case .string(let one)?: checkEvents([one])
        default: add("on must be a non-empty list of event types, e.g. {\"user.suspended\", \"role.*\"}", field: fields["on"] == nil ? nil : "on")
        }
        func checkEvents(_ events: [String]) {
            for pattern in events where pattern != "*" && pattern.range(of: "^[a-z_]+(\\.([a-z_]+|\\*))?$", options: .regularExpression) == nil {
                add("on: '\(pattern)' is not an event type (such as user.suspended), a prefix (role.*) or *", field: "on")
            }
        }
        var profile: String?
        if let p = fields["profile"] {
            if let s = p.stringValue {
                if let problem = profileProblem(s) { add(problem, field: "profile") } else { profile = s }
            } else {
                add("profile must be a string", field: "profile")
            }
        }
        if fields["secret"]?.stringValue.map({ !$0.isEmpty }) != true {
            add("secret (the vault entry holding the webhook's signing secret, e.g. \"webhooks/hub\") is required", field: fields["secret"] == nil ? nil : "secret")
        }
        var allow: [String]?
        switch fields["allow"] {
        case nil: break
        case .array(let items)? where items.allSatisfy({ $0.stringValue != nil }): allow = items.compactMap(\.stringValue)
        case .object(let t)? where t.isEmpty: allow = []
        default: add("allow must be a list of permission names, e.g. {\"users.list\"}", field: "allow")
        }
        if let a = allow, let problem = AllowedPermissions.problem(in: a) {
            add(problem, field: "allow")
            allow = nil
        }
        guard let written = fields["recipe"]?.stringValue, !written.isEmpty else {
            add(fields["recipe"] == nil ? "recipe (a path relative to the configuration file's folder, or LIB:RECIPE) is required"
                    : "recipe must be a path relative to the configuration file's folder, or LIB:RECIPE", field: fields["recipe"] == nil ? nil : "recipe")
            return entry()
        }
        let loaded: LoadedRecipe
        switch recipe(written) {
        case .failure(let problem):
            add(problem.message, field: "recipe")
            return entry(recipe: written)
        case .success(let found): loaded = found
        }
        for problem in loaded.problems { add(problem, field: "recipe") }
        guard let manifest = loaded.manifest else { return entry(recipe: written) }
        let event = manifest.params.first { $0.name == "event" }
        if event?.kind != .table {
            add("recipe \"\(written)\" must declare params = { event = { type = \"table\" } }: a trigger's run gets the event as params.event"
                + (event.map { " (it declares event as \($0.kind.rawValue))" } ?? ""), field: "recipe")
        }
        for spec in manifest.params where spec.name != "event" && spec.required && spec.defaultValue == nil {
            add("recipe \"\(written)\" requires parameter '\(spec.name)', which a trigger cannot give (a trigger's run gets only params.event): give it a default", field: "recipe")
        }
        if let allow, let problem = allowProblem(allow, needs: manifest.needs) { add(problem, field: "allow") }
        if fields["profile"] == nil || profile != nil {
            for problem in targetProblems(manifest.targets, profile: profile ?? self.profile) {
                add(problem, field: profile == nil ? nil : "profile")
            }
        }
        return entry(recipe: written)
    }
}
