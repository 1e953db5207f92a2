import Foundation
import HubClient
import ScriptHost
import Configuration

/// `hubscript describe FILE`: the manifest, for people or as JSON, with where each
/// Dispatch target it declares goes under the configuration's profile.
struct DescribeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "describe",
        abstract: "Show a recipe's manifest: parameters, permissions, limits.",
        usage: "FILE|LIB:RECIPE [--json] [--profile P] [--config F]",
        options: [OptionSpec(name: "json", valueName: nil, help: "Print the manifest as JSON.")]
            + CommonOptions.specs.filter { $0.name != "state-dir" },
        discussion: """
        Each Dispatch target the manifest declares (targets = { "ops" }) is shown with the
        URL and token the configuration binds it to for the profile, when a configuration
        is found: that is everywhere the recipe can send. A configuration that cannot be
        read, or a profile it does not define, is an error (exit 2).
        """)

    let path: String
    let json: Bool
    let profile: String?
    let config: String?

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one recipe FILE") }
        // `LIB:RECIPE` names a recipe of a configured library, as `run` takes it.
        path = try RecipeHelp.libraryRecipe(arguments) ?? arguments.positionals[0]
        json = arguments.flag("json")
        profile = CommonOptions.value(arguments, "profile", environment: "HUBSCRIPT_PROFILE")
        config = arguments.value("config")
    }

    func run() throws -> Int32 {
        let manifest: RecipeManifest
        do { manifest = try RecipeManifest.load(from: try RecipeFile(path: path)) } catch {
            Console.err("\(Styled.error) \(TerminalText.text("\(error)"))\n")
            return ExitCode.usage
        }
        let destinations = try targetDestinations(manifest.targets)
        if json {
            var value = ManifestDescription.json(manifest)
            if case .object(var fields) = value, let destinations {
                fields["target_destinations"] = .object(destinations.mapValues(ScriptValue.string))
                value = .object(fields)
            }
            Console.out(try JSONCodec.encode(value) + "\n")
            return ExitCode.success
        }
        var text = ManifestDescription.text(manifest)
        if let destinations {
            let lines = manifest.targets.map { "  \(TerminalText.field($0)) → \(TerminalText.field(destinations[$0] ?? "?"))" }
            text = text.replacingOccurrences(of: "Targets: " + manifest.targets.map(TerminalText.field).joined(separator: ", ") + "\n",
                                             with: "Targets:\n" + lines.joined(separator: "\n") + "\n")
        }
        Console.out(text)
        return ExitCode.success
    }

    /// Where each target goes under the profile, in words; nil without targets (the
    /// configuration is read only for them).
    /// - Throws: the configuration's error, or the profile's (`HubConfig.profile(named:)`).
    func targetDestinations(_ names: [String]) throws -> [String: String]? {
        guard !names.isEmpty else { return nil }
        let config = try LoadedConfiguration.load(explicit: config).hub
        let (name, setting) = try config.profile(named: profile)
        var out: [String: String] = [:]
        for target in names {
            if case .sandbox = setting {
                out[target] = "the sandbox Dispatch (profile '\(name)')"
            } else if let spec = config.dispatchTargets(profile: name)[target] {
                let token = spec.tokenRef.hasPrefix("env:") ? "$\(spec.tokenRef.dropFirst(4))" : "the vault entry \(spec.tokenRef)"
                out[target] = "\(spec.url.absoluteString), token from \(token) (profile '\(name)')"
            } else {
                out[target] = "not defined for profile '\(name)': the recipe cannot run there"
            }
        }
        return out
    }
}
