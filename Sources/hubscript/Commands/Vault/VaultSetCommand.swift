import Foundation
import ScriptHost
import Vault

/// `hubscript vault set NAME`: stores a secret read from standard input or a prompt.
struct VaultSetCommand: Command {
    static let configuration = CommandConfiguration(
        name: "vault set", abstract: "Store a secret, read from standard input or a prompt (never from the command line).",
        usage: "NAME [--key-file PATH | --passphrase] [--vault-dir DIR]",
        options: VaultCommands.specs,
        discussion: """
        The value is standard input when it is not a terminal (one trailing newline is
        dropped), else typed at a prompt without echo. At most 1 MiB; larger files are
        objects (put-object). Names: letters, digits and . _ - / @ : + =. Setting an
        entry that was replaced by an older copy of itself replaces that copy.
        \(VaultCommands.exitCodes)
        """)

    let location: VaultCommands.Location
    let name: String

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count <= 1 else {
            throw UsageError("expected one NAME: the value is read from standard input or a prompt, never from the command line")
        }
        name = try VaultCommands.name(arguments, what: "NAME")
        try VaultName.validate(name)
        location = try VaultCommands.Location(arguments)
    }

    func run() throws -> Int32 {
        let vault = try location.open(policy: .allowEntry(name))
        let value: SecretBytes
        if isatty(0) != 0 {
            guard let typed = try SecretInput.prompt("Value for \(TerminalText.field(name)): ", limit: VaultLimits.maxSecretBytes) else {
                throw UsageError("no value: pipe it to standard input")
            }
            value = typed
        } else {
            value = try SecretInput.standardInput(limit: VaultLimits.maxSecretBytes)
        }
        let outcome = try vault.setSecret(name, value: value)
        Console.out("Stored the secret '\(name)' (\(outcome == .created ? "new" : "replaced")).\n")
        return ExitCode.success
    }
}
