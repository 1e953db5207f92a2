#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif
import Synchronization

/// Colour for people on a terminal: errors, warnings, `FAIL`, `ok` and plan tables.
///
/// Whether a stream is coloured (`isColoured(_:)`):
/// - `--color always`: yes; `--color never`: no (the flag wins over the environment);
/// - `--color auto`, the default: no when `NO_COLOR` is set to any non-empty value
///   (no-color.org) or `TERM` is `dumb`; otherwise yes exactly when the stream is a
///   terminal (`isatty`), so a pipe or a file never gets escape sequences.
///
/// Only text for people is painted: `--json` events carry the exact text, never a
/// colour code. The process makes one choice (`choose(_:)`, from `--color`), read by
/// every writer of the process.
public enum TerminalStyle {
    /// The value of `--color`.
    public enum Choice: String, Sendable, CaseIterable {
        case auto, always, never
    }

    /// Where the painted text is written.
    public enum Stream: Sendable {
        case stdout, stderr
        var fd: Int32 { self == .stdout ? 1 : 2 }
    }

    /// What a piece of text is, and so its colour.
    public enum Role: Sendable, CaseIterable {
        /// `error:` and a failed command's prefix: bold red.
        case error
        /// `warning:`: yellow.
        case warning
        /// `FAIL`: bold red.
        case failure
        /// `ok`: green.
        case success
        /// A table's title and column names: bold.
        case heading
        /// A write that adds (POST): green.
        case adds
        /// A write that changes (PUT, PATCH): yellow.
        case changes
        /// A write that removes (DELETE): red.
        case removes

        /// The SGR sequence that starts the role's style.
        public var start: String {
            switch self {
            case .error, .failure: "\u{1B}[1;31m"
            case .warning, .changes: "\u{1B}[33m"
            case .success, .adds: "\u{1B}[32m"
            case .heading: "\u{1B}[1m"
            case .removes: "\u{1B}[31m"
            }
        }
    }

    /// The SGR sequence that ends every style.
    public static let reset = "\u{1B}[0m"

    private static let chosen = Mutex(Choice.auto)

    /// Sets the process's choice (`--color`); `auto` until called.
    public static func choose(_ choice: Choice) {
        chosen.withLock { $0 = choice }
    }

    /// The process's choice.
    public static var choice: Choice { chosen.withLock { $0 } }

    /// Whether text written to `stream` is painted, under the rules above.
    public static func isColoured(_ stream: Stream,
                                  environment: [String: String] = ProcessEnvironment.all) -> Bool {
        switch choice {
        case .always: return true
        case .never: return false
        case .auto:
            if let noColor = environment["NO_COLOR"], !noColor.isEmpty { return false }
            if environment["TERM"] == "dumb" { return false }
            return isatty(stream.fd) == 1
        }
    }

    /// `text` in `role`'s style when `stream` is coloured, else `text` unchanged. The
    /// text should already be escaped (`TerminalText`): painting adds only SGR codes.
    public static func paint(_ text: String, _ role: Role, on stream: Stream) -> String {
        guard !text.isEmpty, isColoured(stream) else { return text }
        return role.start + text + reset
    }

    /// The role of a write's HTTP method in a plan table (nil: shown plain).
    public static func role(ofMethod method: String) -> Role? {
        switch method.uppercased() {
        case "POST": .adds
        case "PUT", "PATCH": .changes
        case "DELETE": .removes
        default: nil
        }
    }
}
