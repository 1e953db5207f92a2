import Foundation
import Vault

/// `hubscript vault rotate-key`: re-seals every entry under a new key.
struct VaultRotateKeyCommand: Command {
    static let configuration = CommandConfiguration(
        name: "vault rotate-key", abstract: "Re-seal every entry under a new key; the old key stops working.",
        usage: "(--new-key-file PATH | --new-passphrase [--kdf COST]) [--key-file PATH | --passphrase] [--vault-dir DIR]",
        options: [
            OptionSpec(name: "new-key-file", valueName: "path", help: "The new key file (a new random key is written there if it does not exist)."),
            OptionSpec(name: "new-passphrase", valueName: nil, help: "A new passphrase, asked twice ($HUBSCRIPT_VAULT_NEW_PASSPHRASE if set)."),
            VaultCommands.kdfSpec,
        ] + VaultCommands.specs,
        discussion: """
        The current key comes from --key-file, --passphrase or the environment as for
        every vault command; without --new-key-file or --new-passphrase the new key is
        $HUBSCRIPT_VAULT_NEW_KEY. Object files are not rewritten: each has its own key,
        sealed in the vault, and only that is re-sealed. One atomic write: a crash
        leaves the vault under the old key or the new one.
        \(VaultCommands.exitCodes)
        """)

    let location: VaultCommands.Location
    let newKeyFile: String?
    let newPassphrase: Bool
    let kdf: VaultKDF

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
        location = try VaultCommands.Location(arguments)
        newKeyFile = arguments.value("new-key-file")
        newPassphrase = arguments.flag("new-passphrase")
        if newKeyFile != nil && newPassphrase { throw UsageError("--new-key-file and --new-passphrase: give one") }
        if arguments.value("kdf") != nil && !newPassphrase { throw UsageError("--kdf goes with --new-passphrase") }
        kdf = try VaultCommands.kdf(arguments)
    }

    func run() throws -> Int32 {
        let vault = try location.open()
        let (source, created) = try VaultCommands.newKeySource(
            keyFile: newKeyFile, passphrase: newPassphrase,
            passphraseVariable: "HUBSCRIPT_VAULT_NEW_PASSPHRASE", keyVariable: "HUBSCRIPT_VAULT_NEW_KEY")
        let count: Int
        do {
            count = try vault.rotateKey(to: source, kdf: kdf)
        } catch {
            if let created { unlink(created) }
            throw error
        }
        Console.out((created.map(VaultCommands.newKeyNote) ?? "")
            + "Re-sealed \(count) \(count == 1 ? "entry" : "entries") under the new key (object files are unchanged); the old key no longer opens the vault.\n")
        return ExitCode.success
    }
}
