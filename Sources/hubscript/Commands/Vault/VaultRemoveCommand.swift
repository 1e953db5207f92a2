import Foundation
import Vault

/// `hubscript vault rm NAME`.
struct VaultRemoveCommand: Command {
    static let configuration = CommandConfiguration(
        name: "vault rm", abstract: "Remove a secret, or an object and its file.",
        usage: "NAME [--key-file PATH | --passphrase] [--vault-dir DIR]",
        options: VaultCommands.specs,
        discussion: """
        NAME is a secret's name, or an object's name or id. An entry that fails
        authentication, or that is an older copy of itself, can be removed; every other
        entry must authenticate and be the copy the vault last sealed.
        \(VaultCommands.exitCodes)
        """)

    let location: VaultCommands.Location
    let name: String

    init(_ arguments: ParsedArguments) throws {
        name = try VaultCommands.name(arguments, what: "NAME")
        location = try VaultCommands.Location(arguments)
    }

    func run() throws -> Int32 {
        let kind = try location.open(policy: .allowEntry(name)).remove(name)
        Console.out(kind == .secret ? "Removed the secret '\(name)'.\n" : "Removed the object '\(name)' and its file.\n")
        return ExitCode.success
    }
}
