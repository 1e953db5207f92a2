import Foundation
import SystemText
import HubClient
import ScriptHost
import RunJournal
import Configuration

/// Options every command that talks to a Hub takes.
enum CommonOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(name: "profile", valueName: "name", help: "The profile to use (default: $HUBSCRIPT_PROFILE, the config's default_profile, or the built-in sandbox)."),
        OptionSpec(name: "config", valueName: "file", help: "The configuration file (default: $HUBSCRIPT_CONFIG, ./hubscript.config.lua, ~/.config/hubscript/config.lua)."),
        OptionSpec(name: "state-dir", valueName: "dir", help: "Where credentials, the journal and the sandbox live (default: $HUBSCRIPT_STATE_DIR, $XDG_STATE_HOME/hubscript)."),
    ]

    /// A flag's value, else the environment variable's (set and not empty): flags win.
    static func value(_ arguments: ParsedArguments, _ name: String, environment variable: String,
                      _ environment: [String: String] = ProcessEnvironment.all) -> String? {
        if let flag = arguments.value(name) { return flag }
        guard let fromEnvironment = environment[variable], !fromEnvironment.isEmpty else { return nil }
        return fromEnvironment
    }

    /// `--state-dir`, else `$HUBSCRIPT_STATE_DIR`, else the XDG default.
    static func stateDirectory(_ arguments: ParsedArguments) -> StateDirectory {
        StateDirectory(explicit: value(arguments, "state-dir", environment: "HUBSCRIPT_STATE_DIR"))
    }

    /// The common options of one command, with the configuration read once at the
    /// command's entry: everything the command does sees this one `configuration`.
    struct Values {
        let profile: String?
        let configuration: LoadedConfiguration
        let state: StateDirectory
        /// The options a command printed for later (`hubscript runs resume ID`) must repeat
        /// to reach the same configuration and state folder: ` --config PATH` and
        /// ` --state-dir DIR` (absolute, shell-quoted) when they were given as options;
        /// empty otherwise (the environment variables stay in the person's shell).
        let repeatedOptions: String

        /// Reads the options and loads the configuration they name (`--config`, else
        /// the search order of `LoadedConfiguration.load`).
        /// - Throws: the configuration's `HubConfigError` (the command exits with 2).
        init(_ arguments: ParsedArguments) throws {
            profile = CommonOptions.value(arguments, "profile", environment: "HUBSCRIPT_PROFILE")
            configuration = try LoadedConfiguration.load(explicit: arguments.value("config"))
            state = CommonOptions.stateDirectory(arguments)
            var repeated = ""
            if arguments.value("config") != nil, let file = configuration.file { repeated += " --config " + ShellWord.quoted(file.path) }
            if arguments.value("state-dir") != nil { repeated += " --state-dir " + ShellWord.quoted(state.path) }
            repeatedOptions = repeated
        }

        init(profile: String?, configuration: LoadedConfiguration, state: StateDirectory, repeatedOptions: String = "") {
            self.profile = profile
            self.configuration = configuration
            self.state = state
            self.repeatedOptions = repeatedOptions
        }

        /// The same options with `profile` chosen instead.
        func with(profile: String?) -> Values {
            Values(profile: profile, configuration: configuration, state: state, repeatedOptions: repeatedOptions)
        }

        /// The Hub profiles and Dispatch targets of the configuration.
        var hub: HubConfig { configuration.hub }

        /// The journal the configuration names (`journal = "postgresql://…"`), else the
        /// SQLite file in the state directory.
        func journalLocation() throws -> JournalLocation {
            try configuration.journalLocation(state: state)
        }

        /// Opens the configured journal (`Journal.openChecked`).
        func openJournal(check: Journal.IntegrityCheck = .skip) throws -> Journal {
            try Journal.openChecked(try journalLocation(), check: check)
        }

        /// Opens the profile's connection (with the vault: `VaultAccess.connect`); prints
        /// the built-in-sandbox notice once (not when `quiet`). `observe` hears the
        /// client's calls, retries and rate-limit waits.
        func connect(quiet: Bool = false, observe: (@Sendable (HubClientEvent) -> Void)? = nil) throws -> HubConnection {
            let connection = try VaultAccess.connect(config: hub, profile: profile, state: state,
                                                     quiet: quiet, observe: observe)
            if let notice = connection.notice, !quiet { Console.err(notice + "\n") }
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
            main: { group.main($0) }, subcommands: subcommands)
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
        guard let first = args.first else {
            Console.err(help)
            return ExitCode.usage
        }
        if first == "--help" || first == "-h" { Console.out(help); return ExitCode.success }
        let words = subcommands.map(Self.word)
        if first.hasPrefix("-") {
            return UsageReport.fail(UsageReport.optionBeforeSubcommand(args: args, prefix: "hubscript \(name)", words: words),
                                    command: name, args: args)
        }
        guard let sub = subcommands.first(where: { Self.word($0) == first }) else {
            let hint = DidYouMean.hint(for: first, among: words)
            return UsageReport.fail("unknown subcommand '\(first)'\(hint)", command: name, args: args)
        }
        return sub.main(Array(args.dropFirst()))
    }
}
