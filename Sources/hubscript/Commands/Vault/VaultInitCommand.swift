import Foundation
import ScriptHost
import Vault

/// `hubscript vault init`: a new, empty vault.
struct VaultInitCommand: Command {
    static let configuration = CommandConfiguration(
        name: "vault init", abstract: "Create an empty vault.",
        usage: "[--key-file PATH | --passphrase [--kdf COST]] [--vault-dir DIR]",
        options: VaultCommands.specs + [VaultCommands.kdfSpec],
        discussion: """
        --key-file PATH uses that key file, or writes a new random key there (mode 0600)
        if it does not exist. --passphrase asks for a new passphrase twice (or takes
        $HUBSCRIPT_VAULT_PASSPHRASE). Without either, $HUBSCRIPT_VAULT_KEY is the key.
        \(VaultCommands.exitCodes)
        """)

    let location: VaultCommands.Location
    let kdf: VaultKDF

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("unexpected argument '\(arguments.positionals[0])'") }
        location = try VaultCommands.Location(arguments)
        if arguments.value("kdf") != nil && !location.passphrase { throw UsageError("--kdf goes with --passphrase") }
        kdf = try VaultCommands.kdf(arguments)
    }

    func run() throws -> Int32 {
        let existing = location.folder.appendingPathComponent(Vault.indexFileName).path
        guard access(existing, F_OK) != 0 else {
            throw VaultError(.alreadyExists, "a vault already exists at \(existing)")
        }
        let (source, created) = try VaultCommands.newKeySource(
            keyFile: location.keyFile, passphrase: location.passphrase,
            passphraseVariable: "HUBSCRIPT_VAULT_PASSPHRASE", keyVariable: "HUBSCRIPT_VAULT_KEY")
        let vault: Vault
        do {
            vault = try Vault.create(at: location.folder, key: source, kdf: kdf, options: VaultCommands.options(state: location.state))
        } catch {
            if let created { unlink(created) }
            throw error
        }
        var text = created.map(VaultCommands.newKeyNote) ?? ""
        let opens = location.keyFile.map { "the key file \(TerminalText.field($0))" }
            ?? (vault.usesPassphrase ? "a passphrase (\(vault.kdf?.description ?? ""))" : "the key in $HUBSCRIPT_VAULT_KEY")
        text += "Created a vault at \(VaultCommands.path(location.folder)); it opens with \(opens).\n"
        Console.out(text)
        return ExitCode.success
    }
}
