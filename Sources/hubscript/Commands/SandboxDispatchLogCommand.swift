import HubClient
import Foundation
import HubSandbox
import ScriptHost

/// `hubscript sandbox dispatch-log`: what the sandbox Dispatch of the state directory
/// accepted — from embedded runs and from `sandbox serve` alike — oldest first.
struct SandboxDispatchLogCommand: Command {
    static let configuration = CommandConfiguration(
        name: "sandbox dispatch-log",
        abstract: "Print the notifications the sandbox Dispatch received.",
        usage: "[--json]",
        options: [OptionSpec(name: "json", valueName: nil, help: "One JSON object a notification (type \"notification\") on stdout.")]
            + CommonOptions.specs.filter { $0.name == "state-dir" },
        discussion: """
        One line each, oldest first: id, machine, idempotency key (- for none), title, body.
        A replayed send is not repeated. 'hubscript sandbox reset' clears the log; a
        'sandbox serve --memory' keeps its Dispatch in memory and logs nothing here.
        """)

    let state: StateDirectory
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
        state = CommonOptions.stateDirectory(arguments)
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        let file = try state.sandboxFile
        let sent = FileManager.default.fileExists(atPath: file.path)
            ? try StoredDispatchSandbox(storage: .file(file)).sentNotifications() : []
        if json {
            let output = ConsoleOutput(json: true, timestamps: false)
            for n in sent {
                output.event("notification", [
                    "id": .string(n.id), "machine": .string(n.machine), "key": n.idempotencyKey.map(ScriptValue.string) ?? .null,
                    "title": .string(n.title), "body": .string(n.body), "accepted_devices": .integer(Int64(n.acceptedDevices)),
                ])
            }
            return ExitCode.success
        }
        if sent.isEmpty {
            Console.err("the sandbox Dispatch in \(file.path) has received no notifications\n")
            return ExitCode.success
        }
        for n in sent {
            let fields = [n.id, n.machine, n.idempotencyKey ?? "-", n.title, n.body].map { TerminalText.field($0) }
            Console.out(fields.joined(separator: "  ") + "\n")
        }
        return ExitCode.success
    }
}
