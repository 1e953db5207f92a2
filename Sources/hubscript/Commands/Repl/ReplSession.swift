import Foundation
import Synchronization
import ScriptHost
import RecipeModules

/// Where a session's chunks come from: the terminal's line editor, plain lines from a
/// pipe, or the one chunk of `hubscript eval`. Called on the session's Lua thread only.
protocol ReplInput: AnyObject, Sendable {
    /// The next line without its newline, or nil at the end of the input (Ctrl-D).
    /// `names`: what the session has set (`x`, `u.email`), for completion.
    func readLine(prompt: String, names: [String]) -> String?
    /// The input completes names: the driver lists the session's for each line.
    var completes: Bool { get }
}

extension ReplInput {
    var completes: Bool { false }
}

/// One `hubscript eval` or `repl` session: the `repl` module its driver recipe
/// (`ReplDriver`) reads chunks from and shows values with.
final class ReplSession: Sendable {
    enum Mode: String, Sendable { case eval, repl }

    let mode: Mode
    let input: any ReplInput
    /// `--json` (eval): each value is a `value` event on stdout.
    let json: Bool
    /// `--apply`: writes are sent; otherwise they are planned and shown.
    let applying: Bool
    /// How many items of a lazy hub list are shown.
    let maxItems: Int
    /// A line said once the session starts (on a terminal), or nil.
    let greeting: Mutex<String?>
    /// What the driver's calls of `read`, `show`, `fail` and `stop` carry: handed out
    /// once, by `repl.claim()`, which the driver calls before any line runs. A line or a
    /// module it requires reaches the `repl` module as a global, but not the key, so it
    /// cannot prompt the person (a forged "password:") nor read the lines typed next.
    private let key = UUID().uuidString
    private let claimed = Mutex(false)

    init(mode: Mode, input: any ReplInput, json: Bool, applying: Bool, maxItems: Int, greets: Bool = false) {
        greeting = Mutex(greets ? Self.greeting(applying: applying) : nil)
        self.mode = mode
        self.input = input
        self.json = json
        self.applying = applying
        self.maxItems = maxItems
    }

    /// The `repl` module of the session's run, and the display of its writes.
    func plugin(_ environment: HubRunEnvironment) -> Plugin {
        let output = environment.output
        if mode == .repl && !json {
            // Each write is shown as it is made: planned (not sent) or sent.
            let context = environment.context
            let earlier = context.onWrite
            context.onWrite = { [applying] intent, result in
                earlier?(intent, result)
                let what = result.replayed ? "replayed" : (result.planned || !applying ? "planned, not sent" : "sent")
                Self.writeStderr("\(what): \(intent.method) \(TerminalText.field(intent.path)) — \(TerminalText.line(intent.summary))\n")
            }
        }
        return Plugin(module: "repl", summary: "The session of hubscript eval and repl (not available to recipes).", functions: [
            ScriptFunction("claim") { [self] _ in
                guard !claimed.withLock({ done in defer { done = true }; return done }) else {
                    throw ScriptMessageError("repl.claim: the session's module is hubscript's own; a line cannot use it")
                }
                return .value(.string(key))
            },
            ScriptFunction("read") { [self] call in
                try checkKey(call, "read")
                let prompt = try call.string(2)
                var names: [String] = []
                if case .array(let items) = try call.value(3) { names = items.compactMap(\.stringValue) }
                return .value(nextChunkLine(prompt: prompt, names: names).map(ScriptValue.string) ?? .nilValue)
            },
            ScriptFunction("show") { [self] call in
                try checkKey(call, "show")
                let value = try call.value(2)
                let cut = try call.optionalBoolean(3) ?? false
                show(value, cut: cut, output: output)
                return .none
            },
            // Ends the session as a limit ends a run (exit code 4).
            ScriptFunction("stop") { [self] call in
                try checkKey(call, "stop")
                throw ScriptLimitError(try call.string(2))
            },
            ScriptFunction("fail") { [self] call in
                try checkKey(call, "fail")
                Self.writeStderr("error: \(TerminalText.text(try call.string(2)))\n")
                return .none
            },
        ], values: ["mode": .string(mode.rawValue), "max_items": .integer(Int64(maxItems)),
                     "completes": .bool(input.completes),
                     "max_chunk_bytes": .integer(Int64(Self.maxChunkBytes)), "max_chunk_lines": .integer(Int64(Self.maxChunkLines)),
                     "max_show_entries": .integer(Int64(Self.maxShownEntries)), "max_show_bytes": .integer(Int64(Self.maxShownBytes))])
    }

    private func checkKey(_ call: BindingCall, _ name: String) throws {
        guard try call.value(1).stringValue == key else {
            throw ScriptMessageError("repl.\(name): the session's module is hubscript's own; a line cannot use it")
        }
    }

    /// The next line for the driver; `:` commands at the first prompt are answered here.
    func nextChunkLine(prompt: String, names: [String] = []) -> String? {
        if let text = greeting.withLock({ text in defer { text = nil }; return text }) { Self.writeStderr(text) }
        while true {
            guard let line = input.readLine(prompt: prompt, names: names) else { return nil }
            guard mode == .repl, prompt == ReplSession.prompt, line.hasPrefix(":") else { return line }
            switch ReplCommandLine.parse(line) {
            case .quit: return nil
            case .help: Console.out(ReplSession.helpText)
            case .apply: Console.out(applying
                ? "writes are sent (the session started with --apply)\n"
                : "writes are planned and shown, never sent; start the session with hubscript repl --apply to send them\n")
            case .unknown(let message): Self.writeStderr("error: \(message)\n")
            }
        }
    }

    static let prompt = "> "

    /// The most an unfinished chunk may grow to over its continuation lines (each line
    /// compiles the whole chunk again, so the work grows with the square of its size).
    static let maxChunkBytes = 1 << 20
    static let maxChunkLines = 1000

    /// The largest value shown: table entries (nested ones counted) and bytes of text
    /// (strings and keys). Showing copies the value out of the Lua state, whose memory
    /// the session's limit counts, into JSON text, which it does not.
    static let maxShownEntries = 250_000
    static let maxShownBytes = 16 << 20

    static func greeting(applying: Bool) -> String {
        (applying ? "hubscript repl: reads are live and writes are SENT (--apply)."
                  : "hubscript repl: reads are live; writes are planned and shown, never sent.")
            + " :help for help, Ctrl-D to end.\n"
    }

    func show(_ value: ScriptValue, cut: Bool, output: any ScriptOutput) {
        if json {
            var fields: [String: ScriptValue] = ["value": value]
            if cut { fields["more"] = .bool(true) }
            output.event("value", fields)
            return
        }
        for line in PrettyJSON.lines(value) { output.printLine(line) }
        if cut {
            let first = maxItems == 1 ? "the first item" : "the first \(maxItems) items"
            Self.writeStderr("(\(first); the list has more: a for loop or :collect() reads them all, --max-items shows more)\n")
        }
    }

    /// Session notes and line errors go to stderr, with the process's secrets masked.
    static func writeStderr(_ text: String) { Console.err(text) }

    static let helpText = """
        hubscript repl: Lua with the recipe modules (hub, json, log, time, export, csv, dispatch, state).
          An expression shows its value as JSON; a lazy hub list shows its first items.
          x = 1 keeps x for the next lines; a local lasts for its line (as in lua).
          Reads are live. Writes are planned and shown, never sent, unless the session
          started with --apply. An unfinished chunk continues on the next line (>>).
          Tab completes names: modules and functions (hub.users.<Tab>), the session's
          variables and their fields (u.<Tab>). History is kept (up/down).
        Commands:
          :help    this text
          :apply   whether writes are sent or planned
          :quit    end the session (also Ctrl-D)

        """
}

/// A `:` command at the repl's prompt.
enum ReplCommandLine: Equatable {
    case help, quit, apply
    case unknown(String)

    static let names = [":help", ":quit", ":apply"]

    static func parse(_ line: String) -> ReplCommandLine {
        let word = line.trimmingCharacters(in: .whitespaces)
        switch word {
        case ":help", ":h", ":?": return .help
        case ":quit", ":q", ":exit": return .quit
        case ":apply": return .apply
        default:
            let hint = DidYouMean.hint(for: word, among: names)
            return .unknown("unknown command '\(TerminalText.field(word))'\(hint); :help lists the commands")
        }
    }
}
