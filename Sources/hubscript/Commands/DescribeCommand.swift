import Foundation
import ScriptHost

/// `hubscript describe FILE`: the manifest, for people or as JSON.
struct DescribeCommand: Command {
    static let configuration = CommandConfiguration(
        name: "describe",
        abstract: "Show a recipe's manifest: parameters, permissions, limits.",
        usage: "FILE [--json]",
        options: [OptionSpec(name: "json", valueName: nil, help: "Print the manifest as JSON.")])

    let path: String
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one recipe FILE") }
        path = arguments.positionals[0]
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        let manifest: RecipeManifest
        do { manifest = try RecipeManifest.load(from: try RecipeFile(path: path)) } catch {
            Console.err("error: \(TerminalText.text("\(error)"))\n")
            return ExitCode.usage
        }
        Console.out(json ? (try JSONCodec.encode(ManifestDescription.json(manifest))) + "\n" : ManifestDescription.text(manifest))
        return ExitCode.success
    }
}
