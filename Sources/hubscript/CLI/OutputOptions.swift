import Foundation
import SystemText
import HubClient
import ScriptHost
import RecipeModules
import Synchronization

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

        /// What people see of the client, and what `--json` says of it. Every wait the
        /// Hub asks for (a 429's `Retry-After`, no tokens left) and every pacing pause of a
        /// second or more (`HubClientEvent.isNotableWait`) is announced once: on a
        /// terminal with the progress line, as a countdown redrawn each second; otherwise,
        /// and with `--verbose`, as one line; under `--json` also as a `rate_limited` event
        /// (even with `--quiet`, which silences the rest). `--verbose` shows every other
        /// event as a line. Lines go through `progress` so they do not run into the bar.
        func clientObserver(progress: TerminalProgressReporter,
                            events: ConsoleOutput? = nil) -> (@Sendable (HubClientEvent) -> Void)? {
            let (quiet, verbose) = (self.quiet, self.verbose)
            if quiet && events == nil { return nil }
            let waits = RateLimitNotice.Waits()
            return { event in
                if case .rateLimitWait(let seconds, let reason) = event, event.isNotableWait {
                    // Callers waiting on one pause (a prefetch and the recipe) are one wait.
                    guard waits.isNew(seconds) else { return }
                    events?.event("rate_limited", RateLimitNotice.fields(seconds, reason))
                    if quiet { return }
                    if !verbose && progress.isEnabled {
                        progress.countdown(seconds: seconds) { RateLimitNotice.text(Double($0), reason) }
                    } else {
                        progress.interject(TerminalText.line(RateLimitNotice.text(seconds, reason)))
                    }
                    return
                }
                if verbose { progress.interject(TerminalText.line(event.text)) }
            }
        }
    }
}

/// How a rate-limit wait is told: `rate limited by the Hub, waiting 3 s`.
enum RateLimitNotice {
    static func text(_ seconds: Double, _ reason: HubClientEvent.WaitReason) -> String {
        let shown = seconds >= 1 ? "\(Int(seconds.rounded(.up))) s" : String(format: "%.1f s", max(0.1, seconds))
        switch reason {
        case .hub: return "rate limited by the Hub, waiting \(shown)"
        case .pacing: return "pacing requests under the rate limit, waiting \(shown)"
        }
    }

    /// The `rate_limited` event: `seconds` (to the millisecond), `reason` (`hub`: the Hub
    /// asked; `pacing`: the client's own pacing under the profile's limit), `message`.
    static func fields(_ seconds: Double, _ reason: HubClientEvent.WaitReason) -> [String: ScriptValue] {
        let ms = (seconds * 1000).rounded()
        return [
            "seconds": ms.truncatingRemainder(dividingBy: 1000) == 0 ? .integer(Int64(ms / 1000)) : .number(ms / 1000),
            "reason": .string(reason == .hub ? "hub" : "pacing"),
            "message": .string(text(seconds, reason)),
        ]
    }

    /// The waits announced so far: one that ends with (or before) the last one is the
    /// same pause, heard by another caller.
    final class Waits: Sendable {
        private let lastEnd = Mutex(-Double.infinity)

        func isNew(_ seconds: Double) -> Bool {
            let end = MonotonicTime.seconds() + seconds
            return lastEnd.withLock { lastEnd in
                guard end > lastEnd + 0.25 else { return false }
                lastEnd = end
                return true
            }
        }
    }
}
