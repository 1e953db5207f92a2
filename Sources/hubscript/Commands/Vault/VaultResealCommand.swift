import Foundation
import Vault

/// `hubscript vault reseal`: accepts the vault as it is now, after a restore on purpose.
struct VaultResealCommand: Command {
    static let configuration = CommandConfiguration(
        name: "vault reseal", abstract: "Accept the vault as it is now, after restoring it (or an entry) from a backup on purpose.",
        usage: "[--key-file PATH | --passphrase] [--vault-dir DIR]",
        options: VaultCommands.specs,
        discussion: """
        A vault refuses to open when an entry is an older copy of itself, was put in or
        taken out outside hubscript (entry_rolled_back, entry_added, entry_removed), or
        when the whole vault is older than this machine has seen (rolled_back). After a
        restore you meant, reseal seals the index as it is at a new generation and
        remembers it. Every entry must still authenticate under the key.
        \(VaultCommands.exitCodes)
        """)

    let location: VaultCommands.Location

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
        location = try VaultCommands.Location(arguments)
    }

    func run() throws -> Int32 {
        let generation = try location.open(policy: .accept).reseal()
        Console.out("Sealed the vault \(VaultCommands.path(location.folder)) as it is, at generation \(generation).\n")
        return ExitCode.success
    }
}
