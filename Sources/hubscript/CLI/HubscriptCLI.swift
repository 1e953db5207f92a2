import Foundation
import ScriptHost
import Configuration

/// Picks the subcommand; `hubscript FILE.lua …` is shorthand for `hubscript run FILE.lua …`.
enum HubscriptCLI {
    struct Entry: Sendable {
        let configuration: CommandConfiguration
        let main: @Sendable ([String]) -> Int32
        /// A group's subcommands (`runs list`, …), for completion.
        var subcommands: [Entry] = []
    }

    static func entry<C: Command>(_ type: C.Type) -> Entry {
        Entry(configuration: C.configuration, main: { C.main($0) })
    }

    static let subcommands: [Entry] = [
        entry(RunCommand.self), entry(CheckCommand.self), entry(TestCommand.self), entry(NewCommand.self),
        entry(TrustCommand.self), entry(VerifyCommand.self), entry(DescribeCommand.self),
        PlanCommands.entry, entry(ApplyCommand.self), entry(ApproveCommand.self), entry(RejectCommand.self),
        PlansCommands.group.entry, RunsCommands.group.entry,
        entry(LoginCommand.self), entry(LogoutCommand.self), entry(WhoamiCommand.self), entry(DoctorCommand.self), KeysCommands.group.entry, SandboxCommands.group.entry, DispatchCommands.group.entry, VaultCommands.group.entry, JobsCommands.group.entry, entry(ListenCommand.self), entry(DocsCommand.self),
        entry(ConsoleCommand.self), entry(CompletionCommand.self), entry(EvalCommand.self), entry(ReplCommand.self),
    ]

    static var help: String {
        var text = """
        OVERVIEW: Run sandboxed Lua recipes against the Substratal Hub.

        USAGE: hubscript <subcommand> [options]
               hubscript FILE.lua [run options]   (shorthand for 'hubscript run FILE.lua')
               hubscript LIB:RECIPE [run options] (recipe RECIPE.lua of library LIB, pinned in hubscript.lock)

        SUBCOMMANDS:

        """
        var width = 0
        for s in subcommands { width = max(width, s.configuration.name.count) }
        for s in subcommands {
            text += "  " + s.configuration.name.padding(toLength: width, withPad: " ", startingAt: 0)
                + "  " + s.configuration.abstract + "\n"
        }
        text += "\nOPTIONS:\n  --version       Show the version.\n  --color <when>  Colour for people: auto (on a terminal, unless NO_COLOR is set), always or never.\n  -h, --help      Show help information.\n"
        text += "\nSee 'hubscript <subcommand> --help' for a subcommand's options.\n"
        return text
    }

    static func dispatch(_ given: [String]) -> Int32 {
        let args: [String]
        do { args = try ColorOption.leading(given) } catch let error as UsageError {
            return UsageReport.fail(error.message, command: nil, args: given)
        } catch { return UsageReport.fail("\(error)", command: nil, args: given) }
        guard let first = args.first else {
            Console.err(help)
            return ExitCode.usage
        }
        switch first {
        case "--help", "-h", "help":
            Console.out(help)
            return ExitCode.success
        case "--version":
            Console.out("hubscript \(HubscriptVersion.current)\n")
            return ExitCode.success
        default:
            // A run skips building `subcommands` (every command's configuration, which a
            // run never reads). No subcommand's name ends in ".lua"
            // (HubscriptCLITests), so the shorthand cannot shadow one.
            if first == RunCommand.configuration.name { return RunCommand.main(Array(args.dropFirst())) }
            if first == CompleteCommand.name { return CompleteCommand.main(Array(args.dropFirst())) }
            if first.hasSuffix(".lua") { return RunCommand.main(args) }
            if let command = subcommands.first(where: { $0.configuration.name == first }) {
                return command.main(Array(args.dropFirst()))
            }
            if LibraryRecipe.reference(first) != nil { return RunCommand.main(args) }
            let names = subcommands.map(\.configuration.name)
            if first.hasPrefix("-") {
                return UsageReport.fail(UsageReport.optionBeforeSubcommand(args: args, prefix: "hubscript", words: names),
                                        command: nil, args: args)
            }
            return UsageReport.fail("unknown subcommand '\(first)'" + DidYouMean.hint(for: first, among: names),
                                    command: nil, args: args)
        }
    }
}
