import ShellCompletion

/// hubscript's command line for completion, generated from the commands' own
/// configurations (so completion never offers an option that does not exist), with
/// what each option's value and each positional argument is.
enum CompletionTreeBuilder {
    static var tree: CompletionTree {
        CompletionTree(commands: HubscriptCLI.subcommands.map(command), topOptions: ["--help", "--version"],
                       shorthand: (value: .recipes, command: RunCommand.configuration.name))
    }

    static func command(_ entry: HubscriptCLI.Entry) -> CompletionNode {
        let configuration = entry.configuration
        let word = String(configuration.name.split(separator: " ").last ?? "")
        if !entry.subcommands.isEmpty {
            return CompletionNode(word: word, subcommands: entry.subcommands.map(command))
        }
        let (positionals, repeats) = positionals(configuration)
        return CompletionNode(
            word: word,
            options: configuration.options.map { CompletionOption(name: $0.name, value: value(of: $0), repeatable: $0.repeatable) },
            positionals: positionals, repeatsLastPositional: repeats)
    }

    /// What an option's value is: by the option's name where it means one thing
    /// everywhere, else by the name of its value (`file`, `dir`, `a|b|c`).
    static func value(of option: OptionSpec) -> CompletionValue? {
        guard let valueName = option.valueName else { return nil }
        switch option.name {
        case "profile": return .profiles
        case "job": return .jobs
        case "param": return .recipeParams
        case "config", "recipe": return .luaFiles
        case "rate-limits": return .words(["standard", "off"])
        case "color": return .words(["auto", "always", "never"])
        default: break
        }
        switch valueName {
        case "file", "path": return .files
        case "dir": return .directories
        default:
            let choices = valueName.split(separator: "|").map(String.init)
            if choices.count > 1, choices.allSatisfy(isWord) { return .words(choices) }
            return CompletionValue.none
        }
    }

    /// What a command's positional arguments are: by the command where the names come
    /// from the configuration or the journal, else from the first word of its usage
    /// (`bash|zsh|fish`: those words; `FILE`, `PLAN.json`: files).
    static func positionals(_ configuration: CommandConfiguration) -> ([CompletionValue], repeats: Bool) {
        switch configuration.name {
        case "run", "plan", "describe": return ([.recipes], false)
        case "check": return ([.recipes], true)
        case "test": return ([.files], true)
        case "trust", "verify": return ([.librariesOrFiles], true)
        case "runs show", "runs resume": return ([.runIDs], false)
        case "jobs run", "jobs history": return ([.jobs], false)
        default: break
        }
        guard let first = configuration.usage.split(separator: " ").first.map(String.init), !first.hasPrefix("[") && !first.hasPrefix("-")
        else { return ([], false) }
        let choices = first.split(separator: "|").map(String.init)
        if choices.allSatisfy(isWord) { return ([.words(choices)], false) }
        if choices.contains(where: { $0.contains("FILE") || $0.contains(".json") || $0.contains("PATH") }) {
            return ([.files], first.hasSuffix("…"))
        }
        return ([], false)
    }

    /// A word typed as it is (`bash`, `modules`), not a placeholder (`NAME`, `<subcommand>`).
    static func isWord(_ text: String) -> Bool {
        !text.isEmpty && text.unicodeScalars.allSatisfy { ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" }
    }
}
