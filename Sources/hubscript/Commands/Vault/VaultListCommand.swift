import Foundation
import ScriptHost
import Vault

/// `hubscript vault list`: names, kinds and dates; never values.
struct VaultListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "vault list", abstract: "List the vault's entries: names, kinds and dates, never values.",
        usage: "[--json] [--key-file PATH | --passphrase] [--vault-dir DIR]",
        options: [OptionSpec(name: "json", valueName: nil, help: "One JSON object an entry (type \"vault_entry\") on stdout.")] + VaultCommands.specs,
        discussion: "Every entry is authenticated first: a tampered one is named and nothing is listed.\n\(VaultCommands.exitCodes)")

    let location: VaultCommands.Location
    let json: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
        location = try VaultCommands.Location(arguments)
        json = arguments.flag("json")
    }

    func run() throws -> Int32 {
        let entries = try location.open().list()
        if json {
            let output = ConsoleOutput(json: true, timestamps: false)
            for e in entries {
                output.event("vault_entry", [
                    "name": .string(e.name), "kind": .string(e.kind.rawValue),
                    "created_at": .string(Self.time(e.created)), "updated_at": .string(Self.time(e.updated)),
                    "object_id": e.object.map { .string($0.id) } ?? .null,
                    "size": e.object.map { .integer(Int64($0.size)) } ?? .null,
                ])
            }
            return ExitCode.success
        }
        guard !entries.isEmpty else {
            Console.out("The vault is empty.\n")
            return ExitCode.success
        }
        let width = max(4, entries.map(\.name.count).max() ?? 0)
        func pad(_ s: String, _ n: Int) -> String { s.padding(toLength: n, withPad: " ", startingAt: 0) }
        var text = pad("NAME", width) + "  KIND    CREATED               UPDATED               OBJECT\n"
        for e in entries {
            let object = e.object.map { e.name == $0.id ? "\($0.size) bytes" : "\($0.id) (\($0.size) bytes)" } ?? ""
            let row = pad(e.name, width) + "  " + pad(e.kind.rawValue, 6) + "  " + pad(Self.time(e.created), 20) + "  "
                + pad(Self.time(e.updated), 20) + "  " + object
            text += row.replacingOccurrences(of: " +$", with: "", options: .regularExpression) + "\n"
        }
        Console.out(text)
        return ExitCode.success
    }

    /// `2026-01-01T00:00:00Z`.
    static func time(_ date: Date) -> String { ISO8601DateFormatter().string(from: date) }
}
