import Foundation
import Runs
import ScriptHost
import SystemText

/// One option of a command. `valueName == nil` makes it a flag.
struct OptionSpec: Sendable {
    let name: String
    let valueName: String?
    let help: String
    var repeatable = false
}

/// What a command declares about itself, in the shape of swift-argument-parser's
/// `CommandConfiguration`: the help text is generated from it.
struct CommandConfiguration: Sendable {
    let name: String
    let abstract: String
    /// `hubscript <name> <usage>`.
    let usage: String
    var options: [OptionSpec] = []
    var discussion: String = ""
}

/// A subcommand: declared configuration, parsed into `Self` (validation happens in
/// `init`), then `run()` returns the process exit code. Work lives in the libraries.
protocol Command: SendableMetatype {
    static var configuration: CommandConfiguration { get }
    init(_ arguments: ParsedArguments) throws
    func run() throws -> Int32
    /// The `--help` text for this command line (`args` are the command's arguments, so
    /// `hubscript RECIPE.lua --help` can show the recipe's parameters). Throws when
    /// what the help would describe cannot be read (a `LIB:RECIPE` whose configuration
    /// is broken): that is reported as an error, exit code 2.
    static func help(for args: [String]) throws -> String
}

/// A usage mistake: printed with a pointer to `--help`; exit code 2.
struct UsageError: Error, CustomStringConvertible {
    let message: String
    init(_ message: String) { self.message = message }
    var description: String { message }
}

/// The parsed command line of one command.
struct ParsedArguments {
    var values: [String: [String]] = [:]
    var flags: Set<String> = []
    var positionals: [String] = []

    func value(_ name: String) -> String? { values[name]?.last }
    func all(_ name: String) -> [String] { values[name] ?? [] }
    func flag(_ name: String) -> Bool { flags.contains(name) }

    /// Parses `args` against `options`. `--name value`, `--name=value`, flags; `--`
    /// ends options. Unknown options and missing values are usage errors.
    static func parse(_ args: [String], options: [OptionSpec], command: String) throws -> ParsedArguments {
        var parsed = ParsedArguments()
        var k = 0
        var onlyPositionals = false
        while k < args.count {
            let arg = args[k]
            k += 1
            if onlyPositionals || !arg.hasPrefix("--") || arg == "-" {
                if arg.hasPrefix("-") && arg.count > 1 && !onlyPositionals && arg != "-" {
                    // `-param x`: one dash where two were meant.
                    let hint = DidYouMean.hint(for: String(arg.drop { $0 == "-" }), among: options.map(\.name), prefix: "--")
                    throw UsageError("unknown option '\(arg)'" + hint)
                }
                parsed.positionals.append(arg)
                continue
            }
            if arg == "--" { onlyPositionals = true; continue }
            var name = String(arg.dropFirst(2))
            var inline: String?
            if let eq = name.firstIndex(of: "=") {
                inline = String(name[name.index(after: eq)...])
                name = String(name[..<eq])
            }
            guard let spec = options.first(where: { $0.name == name }) else {
                throw UsageError("unknown option '--\(name)'" + DidYouMean.hint(for: name, among: options.map(\.name), prefix: "--"))
            }
            if let valueName = spec.valueName {
                let value: String
                if let inline { value = inline } else {
                    guard k < args.count else { throw UsageError("option '--\(name)' needs a value (\(valueName))") }
                    value = args[k]
                    k += 1
                }
                if !spec.repeatable && parsed.values[name] != nil {
                    throw UsageError("option '--\(name)' given more than once")
                }
                parsed.values[name, default: []].append(value)
            } else {
                if inline != nil { throw UsageError("option '--\(name)' takes no value") }
                parsed.flags.insert(name)
            }
        }
        return parsed
    }
}

extension Command {
    static func help(for args: [String]) -> String { helpText }

    /// The generated `--help` text.
    static var helpText: String {
        let c = configuration
        var text = "OVERVIEW: \(c.abstract)\n\nUSAGE: hubscript \(c.name) \(c.usage)\n"
        if !c.discussion.isEmpty { text += "\n\(c.discussion)\n" }
        // `--color` (which every command takes) is told once, in `hubscript --help`.
        let rows = c.options.map { spec -> (String, String) in
            let left = "--\(spec.name)" + (spec.valueName.map { " <\($0)>" } ?? "")
            return (left, spec.help + (spec.repeatable ? " (repeatable)" : ""))
        } + [("-h, --help", "Show help information.")]
        let width = rows.map(\.0.count).max() ?? 0
        text += "\nOPTIONS:\n"
        for (left, help) in rows {
            text += "  " + left.padding(toLength: width, withPad: " ", startingAt: 0) + "  " + help + "\n"
        }
        return text
    }

    /// Parses and runs, turning usage errors into exit code 2.
    static func main(_ args: [String]) -> Int32 {
        do {
            if args.contains("--help") || args.contains("-h") {
                Console.out(try help(for: args))
                return 0
            }
            ColorOption.prescan(args)
            let parsed = try ParsedArguments.parse(args, options: ColorOption.adding(to: configuration.options),
                                                   command: configuration.name)
            try ColorOption.apply(parsed)
            return try Self(parsed).run()
        } catch let e as UsageError {
            JSONEvents.usageError(e.message, command: configuration.name, args: args)
            Console.err(TerminalStyle.paint("hubscript \(configuration.name):", .error, on: .stderr)
                + " \(TerminalText.text(e.message))\nRun 'hubscript \(configuration.name) --help' for usage.\n")
            return ExitCode.usage
        } catch {
            // A configuration or journal problem the command did not report itself.
            if args.contains("--json") {
                let output = ConsoleOutput(json: true, timestamps: true)
                output.event("error", JSONEvents.hostError(error))
                output.event("summary", JSONEvents.summary(status: "failed", exitCode: ExitCode.usage, runID: nil))
            }
            Console.err(TerminalStyle.paint("hubscript \(configuration.name):", .error, on: .stderr)
                + " \(TerminalText.text("\(error)"))\n")
            return ExitCode.usage
        }
    }
}

/// A usage mistake of `hubscript` itself or of a command group (`hubscript runs …`),
/// found before any command parsed its options: the same report as a command's
/// (`Command.main`): text on stderr, and under `--json` an `error` event (kind `usage`)
/// and a `summary` with exit code 2.
enum UsageReport {
    /// Reports `message` about `command` (a group's name; nil: `hubscript` itself). Returns 2.
    static func fail(_ message: String, command: String?, args: [String]) -> Int32 {
        JSONEvents.usageError(message, command: command, args: args)
        let name = command.map { "hubscript \($0)" } ?? "hubscript"
        let list = command == nil ? "Run 'hubscript --help' for the list of subcommands." : "Run '\(name) --help' for the list."
        Console.err(TerminalStyle.paint("\(name):", .error, on: .stderr) + " \(TerminalText.field(message))\n\(list)\n")
        return ExitCode.usage
    }

    /// The message for an option given before the subcommand (`hubscript runs --json list`):
    /// the command as it should be written when a subcommand follows, else what is missing.
    static func optionBeforeSubcommand(args: [String], prefix: String, words: [String]) -> String {
        if let at = args.firstIndex(where: { words.contains($0) || $0.hasSuffix(".lua") && prefix == "hubscript" }) {
            let reordered = args[at...] + args[..<at]
            return "options go after the subcommand: \(prefix) \(reordered.joined(separator: " "))"
        }
        return "missing the subcommand: write \(prefix) <subcommand> \(args.joined(separator: " "))"
    }
}

enum ExitCode {
    static let success: Int32 = 0
    static let recipeFailed: Int32 = 1
    static let usage = RunExitCode.usage
    static let capabilityDenied = RunExitCode.capabilityDenied
    static let limit = RunExitCode.limit
    /// The command ended, but some of what it wrote to stdout was lost (full disk,
    /// closed pipe): `StandardOutputLoss`. A command that ended non-zero keeps its own
    /// code (5 is `plan --detailed-exitcode`'s "the plan has writes").
    static let outputLost: Int32 = 6
}

/// Unbuffered writes to the process's stdout and stderr.
/// The CLI's own messages; loaded secrets are masked (`SecretRedactor`) as in a run's output.
enum Console {
    static func out(_ text: String) { StandardOutputLoss.write(SecretRedactor.shared.redact(text)) }
    static func err(_ text: String) { StandardError.write(SecretRedactor.shared.redact(text)) }
}
