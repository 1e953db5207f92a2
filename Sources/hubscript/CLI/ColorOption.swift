import SystemText
import ScriptHost

/// `--color auto|always|never`, taken by every command (`Command.main` adds it to the
/// command's options) and by `hubscript` itself before the subcommand
/// (`hubscript --color never plan …`). It sets the process's `TerminalStyle` choice;
/// `NO_COLOR` and whether the stream is a terminal decide under `auto`.
enum ColorOption {
    /// Not listed in each command's help (the top-level help tells it once).
    static let spec = OptionSpec(name: "color", valueName: "when",
                                 help: "Colour for people: auto (on a terminal, unless NO_COLOR is set), always or never.")

    /// Applies `--color` if given.
    /// - Throws: `UsageError` for a value other than auto, always or never.
    static func apply(_ arguments: ParsedArguments) throws {
        guard let value = arguments.value("color") else { return }
        TerminalStyle.choose(try choice(value))
    }

    /// Applies a valid `--color` found among a command's `args` before they are parsed,
    /// so a usage error about another option is painted as asked. An invalid value is
    /// left for the parse to report.
    static func prescan(_ args: [String]) {
        var k = 0
        while k < args.count, args[k] != "--" {
            if args[k] == "--color", k + 1 < args.count, let choice = try? choice(args[k + 1]) { TerminalStyle.choose(choice) }
            if args[k].hasPrefix("--color="), let choice = try? choice(String(args[k].dropFirst("--color=".count))) {
                TerminalStyle.choose(choice)
            }
            k += 1
        }
    }

    static func choice(_ value: String) throws -> TerminalStyle.Choice {
        guard let choice = TerminalStyle.Choice(rawValue: value) else {
            let names = TerminalStyle.Choice.allCases.map(\.rawValue)
            throw UsageError("--color takes auto, always or never, not '\(value)'" + DidYouMean.hint(for: value, among: names))
        }
        return choice
    }

    /// `hubscript --color WHEN SUBCOMMAND …` (or `--color=WHEN`): applies the choice and
    /// returns the arguments without it. Arguments that do not start so come back as given.
    static func leading(_ args: [String]) throws -> [String] {
        guard let first = args.first else { return args }
        if first == "--color" {
            guard args.count > 1 else { throw UsageError("option '--color' needs a value (when)") }
            TerminalStyle.choose(try choice(args[1]))
            return Array(args.dropFirst(2))
        }
        if first.hasPrefix("--color=") {
            TerminalStyle.choose(try choice(String(first.dropFirst("--color=".count))))
            return Array(args.dropFirst())
        }
        return args
    }

    /// A command's options with `--color` (once).
    static func adding(to options: [OptionSpec]) -> [OptionSpec] {
        options.contains { $0.name == spec.name } ? options : options + [spec]
    }
}

/// The words people scan for, painted when their stream is coloured (`TerminalStyle`).
enum Styled {
    /// `ok  ` (padded to `FAIL`'s width) for a line on stdout.
    static var ok: String { TerminalStyle.paint("ok", .success, on: .stdout) + "  " }
    /// `FAIL` for a line on stdout.
    static var fail: String { TerminalStyle.paint("FAIL", .failure, on: .stdout) }
    /// `error:` for a line on stderr.
    static var error: String { TerminalStyle.paint("error:", .error, on: .stderr) }
    /// `warning:` for a line on stderr.
    static var warning: String { TerminalStyle.paint("warning:", .warning, on: .stderr) }
}
