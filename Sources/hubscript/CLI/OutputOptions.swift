import Foundation
import HubBindings
import HubClient
import ScriptHost

/// How much a run says on stderr besides the recipe's own output: `--quiet`,
/// `--verbose`, `--no-progress`.
enum OutputOptions {
    static let specs: [OptionSpec] = [
        OptionSpec(name: "quiet", valueName: nil, help: "No sandbox notice, no progress line, no rate-limit notices."),
        OptionSpec(name: "verbose", valueName: nil, help: "Show log.debug, each Hub call with its status and time, retries and rate-limit waits."),
        OptionSpec(name: "no-progress", valueName: nil, help: "No progress line (it is drawn only on a terminal)."),
    ]

    struct Values: Sendable {
        var quiet = false
        var verbose = false
        var progress = true

        init() {}

        init(_ arguments: ParsedArguments) throws {
            quiet = arguments.flag("quiet")
            verbose = arguments.flag("verbose")
            progress = !arguments.flag("no-progress") && !quiet
            if quiet && verbose { throw UsageError("--quiet and --verbose cannot be used together") }
        }

        var logLevel: LogLevel { verbose ? .debug : .info }

        /// The progress line: on stderr when it is a terminal and progress is wanted.
        func progressReporter(isTerminal: Bool = isatty(2) == 1) -> TerminalProgressReporter {
            TerminalProgressReporter(isEnabled: isTerminal && progress)
        }

        /// What people see of the client: with `--verbose` every event, otherwise the
        /// waits they must not miss (`HubClientEvent.isNotableWait`); nothing with
        /// `--quiet`. Lines go through `progress` so they do not run into the bar.
        func clientObserver(progress: TerminalProgressReporter) -> (@Sendable (HubClientEvent) -> Void)? {
            if quiet { return nil }
            let verbose = self.verbose
            return { event in
                guard verbose || event.isNotableWait else { return }
                progress.interject(TerminalText.line(event.text))
            }
        }
    }
}
