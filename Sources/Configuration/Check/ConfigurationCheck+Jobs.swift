import Foundation
import HubClient
import Scheduler
import ScriptHost
import RecipeModules

/// What every entry's check reads: the configuration's parts, resolved once.
struct EntryContext {
    let file: URL
    let hub: HubConfig
    /// The command line's profile: the profile of entries that name none.
    let profile: String?
    let libraryNames: [String]
    /// The configuration's libraries, pins checked (or why they cannot be had).
    let libraries: Result<[ModuleLibrary], Error>
    let lines: ConfigSourceLines

    typealias Problem = ConfigurationCheck.Problem

    /// Checks job `name` (its table `value`).
    func job(_ name: String, _ value: ScriptValue) -> ConfigurationCheck.Entry {
        var problems: [Problem] = []
        func add(_ message: String, field: String? = nil, within: String? = nil) {
            let line = field.flatMap { lines.field($0, of: name, in: "jobs", within: within) } ?? lines.entry(name, in: "jobs")
            problems.append(Problem(line: line, message: message))
        }
        func entry(recipe: String? = nil) -> ConfigurationCheck.Entry {
            ConfigurationCheck.Entry(kind: .job, name: name, recipe: recipe, problems: problems)
        }
        if let problem = JobDefinition.nameProblem(name) { add(problem) }
        let fields: [String: ScriptValue]
        switch value {
        case .object(let t): fields = t
        case .array([]): fields = [:]
        default:
            add("must be a table like { recipe = \"…\", schedule = \"…\" }")
            return entry()
        }
        var config: [String: JobConfigValue] = [:]
        for key in fields.keys.sorted() {
            guard JobDefinition.configFields.contains(key) else {
                let hint = DidYouMean.hint(for: key, among: JobDefinition.configFields)
                add("unknown field \"\(key)\"\(hint) (known: \(JobDefinition.configFields.joined(separator: ", ")))", field: key)
                continue
            }
            guard let converted = JobsConfigParser.convert(fields[key]!) else {
                add("\(key) holds a \(fields[key]!.luaTypeName) (use strings, numbers, booleans and tables)", field: key)
                continue
            }
            config[key] = converted
        }
        // The schedule and its zone first, on their own; then the rest, one field at a
        // time: a field at fault is reported and left out, so the others are still read.
        if config["schedule"] == nil {
            add("schedule is required (a 5-field cron such as \"30 2 * * *\", or @daily, @hourly, …)")
        }
        if case .string(let expression)? = config["schedule"] {
            do { _ = try CronSchedule(expression, timeZone: "UTC") } catch {
                add("schedule: \((error as? SchedulerError)?.message ?? "\(error)")", field: "schedule")
            }
        }
        if case .string(let zone)? = config["timezone"] {
            do { _ = try CronSchedule("0 0 * * *", timeZone: zone) } catch {
                add("timezone: \((error as? SchedulerError)?.message ?? "\(error)")", field: "timezone")
            }
        }
        var readable = config
        if case .string? = readable["schedule"] { readable["schedule"] = .string("0 0 * * *") }
        if case .string? = readable["timezone"] { readable["timezone"] = .string("UTC") }
        if readable["schedule"] == nil { readable["schedule"] = .string("0 0 * * *") }
        var recipeMissing = readable["recipe"] == nil
        if recipeMissing {
            add("recipe (a path relative to the configuration file's folder, or LIB:RECIPE) is required")
            readable["recipe"] = .string("-")
        }
        var definition: JobDefinition?
        for _ in 0...JobDefinition.configFields.count {
            do {
                definition = try JobDefinition(name: JobDefinition.nameProblem(name) == nil ? name : "job", config: readable)
                break
            } catch let error as SchedulerError {
                let message = Self.withoutJobPrefix(error.message)
                let field = JobDefinition.configFields.first { message.hasPrefix($0) } ?? ""
                add(message, field: field.isEmpty ? nil : field)
                guard !field.isEmpty, readable.removeValue(forKey: field) != nil else { break }
                if field == "schedule" { readable["schedule"] = .string("0 0 * * *") }
                if field == "recipe" {
                    readable["recipe"] = .string("-")
                    recipeMissing = true
                }
            } catch {
                add("\(error)")
                break
            }
        }
        guard let definition else { return entry() }
        let shownRecipe = recipeMissing ? nil : definition.recipe
        if let profile = definition.profile, let problem = profileProblem(profile) { add(problem, field: "profile") }
        if let allow = definition.allow, let problem = AllowedPermissions.problem(in: allow) { add(problem, field: "allow") }
        if let target = definition.onFailureDispatch, let problem = failureDispatchProblem(target) {
            add(problem, field: "dispatch", within: "on_failure")
        }
        guard !recipeMissing else { return entry(recipe: shownRecipe) }
        let loaded: LoadedRecipe
        switch recipe(definition.recipe) {
        case .failure(let problem):
            add(problem.message, field: "recipe")
            return entry(recipe: shownRecipe)
        case .success(let recipe): loaded = recipe
        }
        for problem in loaded.problems { add(problem, field: "recipe") }
        guard let manifest = loaded.manifest else { return entry(recipe: shownRecipe) }
        for (param, message) in paramProblems(definition.params, manifest: manifest, recipe: loaded.shown) {
            add(message, field: param, within: "params")
        }
        if let allow = definition.allow, let problem = allowProblem(allow, needs: manifest.needs) { add(problem, field: "allow") }
        let profileName = definition.profile ?? profile
        if definition.profile == nil || profileProblem(definition.profile!) == nil {
            for problem in targetProblems(manifest.targets, profile: profileName) {
                add(problem, field: definition.profile == nil ? nil : "profile")
            }
        }
        return entry(recipe: shownRecipe)
    }

    /// A job's params against `manifest`, each problem with the param it is about.
    func paramProblems(_ params: [String: JobParam], manifest: RecipeManifest, recipe: String) -> [(String?, String)] {
        var problems: [(String?, String)] = []
        let specs = Dictionary(uniqueKeysWithValues: manifest.params.map { ($0.name, $0) })
        let names = manifest.params.map(\.name)
        let takes = names.isEmpty ? "it takes no parameters" : "it takes: " + names.joined(separator: ", ")
        for (name, value) in params.sorted(by: { $0.key < $1.key }) {
            guard let spec = specs[name] else {
                let hint = DidYouMean.hint(for: name, among: names)
                problems.append((name, "params: unknown parameter '\(name)'\(hint) for \(recipe) (\(takes))"))
                continue
            }
            let texts: [String]
            switch value {
            case .string(let text): texts = [text]
            case .list(let items):
                guard spec.kind == .list else {
                    problems.append((name, "params.\(name) is a list, but \(recipe) takes one \(spec.kind.rawValue)"))
                    continue
                }
                texts = items
            }
            for text in texts {
                if let expected = ParamCoercion.expectation(for: text, as: spec.kind) {
                    problems.append((name, "params.\(name) must be \(expected) (\(recipe) declares it \(spec.kind.rawValue)), got '\(text)'"))
                } else if spec.kind == .file, let problem = ParamValues.fileProblem(text, param: name) {
                    problems.append((name, "params.\(name): \(problem)"))
                }
            }
        }
        for spec in manifest.params where spec.required && spec.defaultValue == nil && params[spec.name] == nil {
            let about = spec.description.map { ": \($0)" } ?? ""
            problems.append((nil, "params: missing required parameter '\(spec.name)' (\(spec.kind.rawValue)\(about)) of \(recipe); add it to the job's params"))
        }
        return problems
    }

    /// `job "NAME": message` → `message`.
    static func withoutJobPrefix(_ message: String) -> String {
        guard message.hasPrefix("job \""), let end = message.range(of: "\": ") else { return message }
        return String(message[end.upperBound...])
    }
}
