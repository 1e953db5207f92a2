import Foundation
import HubClient
import ScriptHost
import RecipeModules

/// A recipe found and read for an entry's check.
struct LoadedRecipe {
    /// The recipe as the report names it: `ops:offboard`, or the path as written.
    let shown: String
    /// Its manifest; nil when it could not be read (then `problems` says why).
    let manifest: RecipeManifest?
    /// Syntax, manifest or `needs` problems.
    let problems: [String]
}

/// Why an entry's recipe cannot be found or read at all.
struct RecipeNotFound: Error {
    let message: String
}

extension EntryContext {
    /// Finds the recipe `written` (a path relative to the configuration's folder, or
    /// `LIB:RECIPE` among the pinned libraries) and reads it as a run would before its
    /// body: syntax, manifest, `needs`. A failure: it cannot be found at all.
    func recipe(_ written: String) -> Result<LoadedRecipe, RecipeNotFound> {
        let folder = file.deletingLastPathComponent()
        let url = URL(fileURLWithPath: written, relativeTo: folder).standardizedFileURL
        let path: String
        do {
            if let name = try LibraryRecipe.configured(written, file: url, libraries: libraryNames, fail: { HubConfigError($0) }) {
                let libraries: [ModuleLibrary]
                switch self.libraries {
                case .success(let found): libraries = found
                case .failure(let error):
                    return .failure(RecipeNotFound(message: "recipe \"\(written)\": the libraries cannot be used: \(ConfigurationCheck.withoutFilePrefix("\(error)", file: file))"))
                }
                path = try LibraryRecipe.file(name, in: libraries).path
                // As a fire does before it runs: the recipe's own library against its pins.
                do { try libraries.first { $0.name == name.library }?.checkWhole?() } catch {
                    return .failure(RecipeNotFound(message: "recipe \"\(written)\": \(ConfigurationCheck.withoutFilePrefix("\(error)", file: file))"))
                }
            } else {
                var isFolder: ObjCBool = false
                guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isFolder), !isFolder.boolValue else {
                    return .failure(RecipeNotFound(message:
                        "recipe \"\(written)\" is not a file (looked for \(url.path); a recipe path is relative to the configuration file's folder)"))
                }
                path = url.path
            }
        } catch {
            return .failure(RecipeNotFound(message: ConfigurationCheck.withoutFilePrefix("\(error)", file: file)))
        }
        let recipeFile: RecipeFile
        do { recipeFile = try RecipeFile(path: path) } catch {
            return .failure(RecipeNotFound(message: "recipe \"\(written)\" cannot be read: \(error)"))
        }
        if let syntax = ScriptRuntime.syntaxError(in: recipeFile) {
            return .success(LoadedRecipe(shown: written, manifest: nil, problems: ["recipe \"\(written)\" does not load: \(syntax)"]))
        }
        let manifest: RecipeManifest
        do { manifest = try RecipeManifest.load(from: recipeFile) } catch {
            return .success(LoadedRecipe(shown: written, manifest: nil, problems: ["recipe \"\(written)\": \(error)"]))
        }
        let unknown = HubGate.unknownPermissions(in: manifest.needs).map { name, hint in
            "recipe \"\(written)\": manifest: needs: unknown permission '\(name)'\(hint)"
        }
        return .success(LoadedRecipe(shown: written, manifest: manifest, problems: unknown))
    }

    /// Why `name` is not a profile an entry can name; nil when it is.
    func profileProblem(_ name: String) -> String? {
        guard hub.profiles[name] == nil, name != HubConfig.builtinSandboxName else { return nil }
        let known = hub.profiles.keys.sorted()
        let hint = DidYouMean.hint(for: name, among: known + [HubConfig.builtinSandboxName])
        return "profile \"\(name)\" is not one of the profiles\(hint) (\(known.isEmpty ? "none" : known.joined(separator: ", ")), or 'sandbox')"
    }

    /// Why the job's `on_failure = { dispatch = PROFILE }` cannot notify: the profile
    /// is missing, or it has no Dispatch configured.
    func failureDispatchProblem(_ target: String) -> String? {
        if let problem = profileProblem(target) { return "on_failure.dispatch: \(problem)" }
        guard let (name, setting) = try? hub.profile(named: target) else { return nil }
        if case .unconfigured(let reason) = DispatchTarget.forProfile(name, setting, sandbox: Self.noSandbox).endpoint {
            return "on_failure.dispatch: \(reason)"
        }
        return nil
    }

    /// Why `allow` does not cover `needs`; nil when it does.
    func allowProblem(_ allow: [String], needs: [String]) -> String? {
        let missing = needs.filter { !allow.contains($0) }
        guard !missing.isEmpty else { return nil }
        let them = missing.count == 1 ? "it" : "them"
        return "allow does not cover the recipe's needs: missing \(missing.joined(separator: ", ")) "
            + "(allow: \(allow.isEmpty ? "nothing" : allow.joined(separator: ", "))); the recipe would be refused (exit 3). "
            + "Add \(them) to allow if the recipe should have \(them)."
    }

    /// The manifest's `targets` that the entry's profile (`name`; nil: the default) does
    /// not define, or why the profile cannot be chosen.
    func targetProblems(_ targets: [String], profile name: String?) -> [String] {
        let chosen: String
        do { chosen = try hub.profile(named: name).name } catch {
            return ["profile: \(ConfigurationCheck.withoutFilePrefix("\(error)", file: file))"]
        }
        return targets.compactMap { target in
            if case .unconfigured(let reason) = DispatchTarget.named(target, profile: chosen, in: hub, sandbox: Self.noSandbox).endpoint {
                return "recipe's targets: \(reason)"
            }
            return nil
        }
    }

    /// The sandbox Dispatch is never opened by a check.
    static let noSandbox: DispatchTarget.SandboxDispatchOpener = {
        throw HubConfigError("a configuration check opens no Dispatch")
    }
}
