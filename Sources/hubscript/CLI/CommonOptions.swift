import Foundation
import HubBindings
import ScriptHost

/// Options every command that talks to a Hub takes.
enum CommonOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(name: "profile", valueName: "name", help: "The profile to use (default: the config's default_profile, or the built-in sandbox)."),
        OptionSpec(name: "config", valueName: "file", help: "The configuration file (default: $HUBSCRIPT_CONFIG, ./hubscript.config.lua, ~/.config/hubscript/config.lua)."),
        OptionSpec(name: "state-dir", valueName: "dir", help: "Where credentials, the journal and the sandbox live (default: $XDG_STATE_HOME/hubscript)."),
    ]

    struct Values {
        let profile: String?
        let config: String?
        let state: StateDirectory

        init(_ arguments: ParsedArguments) {
            profile = arguments.value("profile")
            config = arguments.value("config")
            state = StateDirectory(explicit: arguments.value("state-dir"))
        }

        init(profile: String?, config: String?, state: StateDirectory) {
            self.profile = profile
            self.config = config
            self.state = state
        }

        /// Loads the configuration and opens the profile's connection; prints the
        /// built-in-sandbox notice once.
        func connect() throws -> HubConnection {
            let connection = try HubConnection.open(config: try HubConfig.load(explicit: config), profile: profile, state: state)
            if let notice = connection.notice { Console.err(notice + "\n") }
            return connection
        }
    }
}

/// A command made of subcommands (`hubscript sandbox serve`).
struct CommandGroup: Sendable {
    let name: String
    let abstract: String
    let subcommands: [HubscriptCLI.Entry]

    var entry: HubscriptCLI.Entry {
        let group = self
        return HubscriptCLI.Entry(
            configuration: CommandConfiguration(name: name, abstract: abstract, usage: "<subcommand>"),
            main: { group.main($0) })
    }

    var help: String {
        var text = "OVERVIEW: \(abstract)\n\nUSAGE: hubscript \(name) <subcommand> [options]\n\nSUBCOMMANDS:\n"
        var width = 0
        for s in subcommands { width = max(width, Self.word(s).count) }
        for s in subcommands {
            text += "  " + Self.word(s).padding(toLength: width, withPad: " ", startingAt: 0) + "  " + s.configuration.abstract + "\n"
        }
        return text + "\nSee 'hubscript \(name) <subcommand> --help'.\n"
    }

    /// A subcommand's own word: its name is "group word" so its help reads right.
    static func word(_ entry: HubscriptCLI.Entry) -> String {
        String(entry.configuration.name.split(separator: " ").last ?? "")
    }

    func main(_ args: [String]) -> Int32 {
        guard let first = args.first, !first.hasPrefix("-") else {
            if args.first == "--help" || args.first == "-h" { Console.out(help); return ExitCode.success }
            Console.err(help)
            return ExitCode.usage
        }
        guard let sub = subcommands.first(where: { Self.word($0) == first }) else {
            let hint = DidYouMean.hint(for: first, among: subcommands.map(Self.word))
            Console.err("hubscript \(name): unknown subcommand '\(TerminalText.field(first))'\(hint)\nRun 'hubscript \(name) --help' for the list.\n")
            return ExitCode.usage
        }
        return sub.main(Array(args.dropFirst()))
    }
}
