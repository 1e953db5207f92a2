import Foundation
import HubClient
import ScriptHost
import Configuration

/// Help and usage checks for the commands that take a recipe FILE (run, plan).
enum RecipeHelp {
    /// `hubscript RECIPE.lua --help`: the recipe's manifest (its parameters, needs and
    /// limits) before the command's own help. Without a readable recipe among `args`,
    /// just the command's help.
    /// - Throws: for a `LIB:RECIPE`, the configuration's error, or a `UsageError` when
    ///   it names no such library or recipe (as running it would).
    static func text(args: [String], commandHelp: String, options: [OptionSpec] = RunCommand.configuration.options) throws -> String {
        let parsed = try? ParsedArguments.parse(args.filter { $0 != "--help" && $0 != "-h" }, options: ColorOption.adding(to: options), command: "run")
        // The recipe is a positional (not `--config x.lua`'s value) when the line parses.
        let positionals = parsed?.positionals ?? args
        var path = positionals.first(where: { $0.hasSuffix(".lua") && !$0.hasPrefix("-") })
        if path == nil, let parsed { path = try libraryRecipe(parsed) }
        guard let path, let file = try? RecipeFile(path: path),
              let manifest = try? RecipeManifest.load(from: file) else { return commandHelp }
        return "RECIPE: " + ManifestDescription.text(manifest)
            + "\nSet parameters with --param name=value (a list takes a,b,c or one --param per item).\n\n"
            + commandHelp
    }

    /// The file of the `LIB:RECIPE` among the command line's positionals (`hubscript
    /// ops:offboard --help`), with the configuration and state folder it names; nil when
    /// there is none (or it is an existing file's path).
    /// - Throws: the configuration's error; a `UsageError` for an unknown library or recipe.
    static func libraryRecipe(_ parsed: ParsedArguments) throws -> String? {
        guard let written = parsed.positionals.first(where: { LibraryRecipe.reference($0) != nil }),
              !FileManager.default.fileExists(atPath: written) else { return nil }
        let configuration = try LoadedConfiguration.load(explicit: parsed.value("config"))
        let libraries = try configuration.unpinnedLibraries(state: CommonOptions.stateDirectory(parsed))?.libraries ?? []
        return try resolve(written, libraries: libraries)
    }

    /// `path` as given, or — when no such file exists and it is written `LIB:RECIPE` —
    /// the file of recipe RECIPE of library LIB (`LibraryRecipe.file`; an unknown
    /// library or recipe is a usage error listing those that exist).
    static func resolve(_ path: String, libraries: [ModuleLibrary]) throws -> String {
        guard !FileManager.default.fileExists(atPath: path), let reference = LibraryRecipe.reference(path) else { return path }
        do { return try LibraryRecipe.file(reference, in: libraries).path } catch let error as HubConfigError {
            throw UsageError(error.message)
        }
    }

    /// The recipe FILE of `arguments`, with a hint when a `name=value` was given
    /// without `--param`.
    static func recipePath(_ arguments: ParsedArguments) throws -> String {
        if let stray = arguments.positionals.dropFirst().first(where: { $0.contains("=") && !$0.hasPrefix("=") }) {
            throw UsageError("unexpected argument '\(stray)'; to set a parameter, write --param \(stray)")
        }
        guard arguments.positionals.count == 1 else {
            throw UsageError(arguments.positionals.isEmpty ? "missing the recipe FILE" : "expected one recipe FILE, got \(arguments.positionals.count)")
        }
        return arguments.positionals[0]
    }
}
