import Foundation
import HubClient
import Scheduler
import ScriptHost
import RecipeModules

/// Reads the config file's `jobs` table into `JobsConfig`. Every message starts
/// `config FILE: ` and names the job and the key at fault.
struct JobsConfigParser {
    let file: URL
    let hub: HubConfig

    func fail(_ message: String) -> HubConfigError { HubConfigError("config \(file.path): \(message)") }

    func parse(_ value: ScriptValue) throws -> JobsConfig {
        guard case .object(let top) = value, let jobs = top["jobs"] else { return JobsConfig(source: file, jobs: []) }
        let table: [String: ScriptValue]
        switch jobs {
        case .object(let t): table = t
        case .array([]): table = [:]   // `jobs = {}`
        default: throw fail("jobs must be a table of name = { recipe = …, schedule = … }")
        }
        let libraries = LibraryRecipe.names(in: value)
        return JobsConfig(source: file, jobs: try table.keys.sorted().map { try job($0, table[$0]!, libraries: libraries) })
    }

    private func job(_ name: String, _ value: ScriptValue, libraries: [String]) throws -> ConfiguredJob {
        let fields: [String: ScriptValue]
        switch value {
        case .object(let t): fields = t
        case .array([]): fields = [:]
        default: throw fail("job \"\(name)\" must be a table like { recipe = \"…\", schedule = \"…\" }")
        }
        var config: [String: JobConfigValue] = [:]
        for (key, field) in fields {
            guard let converted = Self.convert(field) else {
                throw fail("job \"\(name)\": \(key) holds a \(field.luaTypeName) (use strings, numbers, booleans and tables)")
            }
            config[key] = converted
        }
        let definition: JobDefinition
        do { definition = try JobDefinition(name: name, config: config) } catch let error as SchedulerError {
            throw fail(error.message)
        }
        if let profile = definition.profile, hub.profiles[profile] == nil, profile != HubConfig.builtinSandboxName {
            let known = hub.profiles.keys.sorted().joined(separator: ", ")
            throw fail("job \"\(name)\": profile \"\(profile)\" is not one of the profiles (\(known.isEmpty ? "none" : known), or 'sandbox')")
        }
        if let allow = definition.allow, let problem = AllowedPermissions.problem(in: allow) {
            throw fail("job \"\(name)\": \(problem)")
        }
        let folder = file.deletingLastPathComponent()
        let recipe = URL(fileURLWithPath: definition.recipe, relativeTo: folder).standardizedFileURL
        if let library = try LibraryRecipe.configured(definition.recipe, file: recipe, libraries: libraries,
                                                      fail: { fail("job \"\(name)\": \($0)") }) {
            return ConfiguredJob(definition: definition, recipe: recipe, library: library)
        }
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: recipe.path, isDirectory: &isFolder), !isFolder.boolValue else {
            throw fail("job \"\(name)\": recipe \"\(definition.recipe)\" is not a file (looked for \(recipe.path); a recipe path is relative to the config file's folder)")
        }
        return ConfiguredJob(definition: definition, recipe: recipe)
    }

    /// A config value as the Scheduler reads it; nil for what a job cannot hold (null,
    /// functions, strings that are not UTF-8). A whole float (`600.0`) is an integer.
    static func convert(_ value: ScriptValue) -> JobConfigValue? {
        switch value {
        case .string(let s): return .string(s)
        case .integer(let i): return .integer(i)
        case .number(let d): return Int64(exactly: d).map(JobConfigValue.integer) ?? .number(d)
        case .bool(let b): return .bool(b)
        case .array(let items):
            let converted = items.compactMap(convert)
            return converted.count == items.count ? .array(converted) : nil
        case .object(let fields):
            var table: [String: JobConfigValue] = [:]
            for (key, field) in fields {
                guard let converted = convert(field) else { return nil }
                table[key] = converted
            }
            return .object(table)
        default: return nil
        }
    }
}
