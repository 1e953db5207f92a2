import Foundation
import SystemText
import HubClient
import ScriptHost
import Vault

/// `hubscript vault …`: the encrypted vault (Sources/Vault; docs/vault.md). No
/// command prints a secret's value.
enum VaultCommands {
    static let group = CommandGroup(
        name: "vault", abstract: "Keep secrets and private files encrypted at rest.",
        subcommands: [HubscriptCLI.entry(VaultInitCommand.self), HubscriptCLI.entry(VaultSetCommand.self),
                      HubscriptCLI.entry(VaultListCommand.self), HubscriptCLI.entry(VaultRemoveCommand.self),
                      HubscriptCLI.entry(VaultRotateKeyCommand.self), HubscriptCLI.entry(VaultPutObjectCommand.self),
                      HubscriptCLI.entry(VaultGetObjectCommand.self), HubscriptCLI.entry(VaultVerifyCommand.self),
                      HubscriptCLI.entry(VaultResealCommand.self)])

    /// Where the vault is, and how to open it: every vault subcommand takes these.
    static let specs: [OptionSpec] = [
        OptionSpec(name: "key-file", valueName: "path", help: "Open with this key file: 32 bytes, raw, hex or base64; mode 0600 (default: $HUBSCRIPT_VAULT_KEY)."),
        OptionSpec(name: "passphrase", valueName: nil, help: "Open with a passphrase, prompted without echo ($HUBSCRIPT_VAULT_PASSPHRASE if set)."),
        OptionSpec(name: "vault-dir", valueName: "dir", help: "The vault's folder (default: $HUBSCRIPT_VAULT_DIR, else vault/ in the state directory)."),
    ] + CommonOptions.specs.filter { $0.name == "state-dir" }

    static let exitCodes = "Exit codes: 0 done, 2 a usage, key or vault error (the vault is left as it was)."

    /// The vault's folder and key options of one command line.
    struct Location {
        let folder: URL
        let keyFile: String?
        let passphrase: Bool
        /// Where this machine's memory of the vault's generation lives.
        let state: StateDirectory

        init(_ arguments: ParsedArguments) throws {
            state = CommonOptions.stateDirectory(arguments)
            if let dir = CommonOptions.value(arguments, "vault-dir", environment: "HUBSCRIPT_VAULT_DIR") {
                folder = URL(fileURLWithPath: dir, isDirectory: true)
            } else {
                folder = state.url.appendingPathComponent("vault", isDirectory: true)
            }
            keyFile = arguments.value("key-file")
            passphrase = arguments.flag("passphrase")
            if keyFile != nil && passphrase { throw UsageError("--key-file and --passphrase: give one") }
        }

        /// The key that opens the vault: --key-file, --passphrase, else
        /// $HUBSCRIPT_VAULT_KEY, $HUBSCRIPT_VAULT_KEY_FILE, $HUBSCRIPT_VAULT_PASSPHRASE
        /// (as runs read them).
        func keySource() throws -> VaultKeySource {
            if let keyFile { return .keyFile(keyFile) }
            if passphrase { return .passphrase(try VaultCommands.passphrase(environment: "HUBSCRIPT_VAULT_PASSPHRASE", prompt: "Vault passphrase: ")) }
            if let key = try VaultKeyMaterial.environmentKey("HUBSCRIPT_VAULT_KEY") { return .key(key) }
            if let file = ProcessEnvironment.value("HUBSCRIPT_VAULT_KEY_FILE"), !file.isEmpty { return .keyFile(file) }
            if let phrase = try VaultKeyMaterial.environmentPassphrase("HUBSCRIPT_VAULT_PASSPHRASE") { return .passphrase(phrase) }
            throw UsageError("no vault key: pass --key-file PATH or --passphrase, or set HUBSCRIPT_VAULT_KEY or HUBSCRIPT_VAULT_KEY_FILE")
        }

        /// Opens the vault; `policy` says what may differ from its sealed index.
        func open(policy: VaultRollbackPolicy = .refuse) throws -> Vault {
            try Vault.open(at: folder, key: try keySource(), options: VaultCommands.options(state: state), policy: policy)
        }
    }

    /// The folder of the state directory where this machine remembers the generation
    /// of each vault it opened (docs/vault-format.md, "Rollback").
    static func generationMemory(state: StateDirectory) -> VaultGenerationMemory {
        VaultGenerationMemory(folder: URL(fileURLWithPath: StateDirectory.join(state.path, "vault-generations"), isDirectory: true))
    }

    /// The vault's options, remembering generations in `state`.
    ///
    /// A debug build only (the crash tests spawn it): `HUBSCRIPT_VAULT_TEST_KILL_AT=POINT`
    /// makes the process SIGKILL itself at that checkpoint, as a crash would. The release
    /// binary, the one users run, has no such code (scripts/test-release checks it).
    static func options(state: StateDirectory) -> VaultOptions {
        var options = VaultOptions(generationMemory: generationMemory(state: state))
        #if DEBUG
        if let point = ProcessEnvironment.value("HUBSCRIPT_VAULT_TEST_KILL_AT"), !point.isEmpty {
            options.checkpoint = { if $0 == point { kill(getpid(), SIGKILL) } }
        }
        #endif
        return options
    }

    /// A passphrase from `environment`, else prompted (twice when `confirm`).
    static func passphrase(environment: String, prompt: String, confirm: Bool = false) throws -> SecretBytes {
        if let phrase = try VaultKeyMaterial.environmentPassphrase(environment) { return phrase }
        let limit = 4096
        guard let first = try SecretInput.prompt(prompt, limit: limit) else {
            throw UsageError("a passphrase needs a terminal to prompt on, or $\(environment)")
        }
        guard first.count > 0 else { throw UsageError("the passphrase is empty") }
        if confirm {
            guard let again = try SecretInput.prompt("Again: ", limit: limit), again.constantTimeEquals(first) else {
                throw UsageError("the passphrases differ; nothing was changed")
            }
        }
        return first
    }

    /// `--kdf interactive|moderate|sensitive` (passphrase vaults).
    static func kdf(_ arguments: ParsedArguments) throws -> VaultKDF {
        switch arguments.value("kdf") ?? "moderate" {
        case "interactive": return .interactive
        case "moderate": return .moderate
        case "sensitive": return .sensitive
        case let other: throw UsageError("--kdf takes interactive, moderate or sensitive, got '\(other)'")
        }
    }

    static let kdfSpec = OptionSpec(name: "kdf", valueName: "cost", help: "Argon2id cost of a new passphrase: interactive, moderate (default) or sensitive.")

    /// A new key source for init and rotate-key: a key file (written with a new random
    /// key if it does not exist, in folders made 0700 where missing; `created` says so), a passphrase (prompted twice, or
    /// from `passphraseVariable`), else the key in `keyVariable`.
    static func newKeySource(keyFile: String?, passphrase: Bool, passphraseVariable: String,
                             keyVariable: String) throws -> (source: VaultKeySource, created: String?) {
        if let keyFile {
            if access(keyFile, F_OK) != 0 {
                try KeyFileFolder.createMissing(for: keyFile)
                return (.key(try VaultKeyMaterial.createKeyFile(keyFile)), keyFile)
            }
            return (.keyFile(keyFile), nil)
        }
        if passphrase {
            return (.passphrase(try Self.passphrase(environment: passphraseVariable, prompt: "New vault passphrase: ", confirm: true)), nil)
        }
        if let key = try VaultKeyMaterial.environmentKey(keyVariable) { return (.key(key), nil) }
        throw UsageError("no new key: pass --key-file PATH (created if missing) or --passphrase, or set \(keyVariable)")
    }

    static func newKeyNote(_ path: String) -> String {
        "Wrote a new key to \(TerminalText.field(path)) (mode 0600). Keep a copy somewhere safe: without it the vault cannot be opened.\n"
    }

    /// One name as a positional argument.
    static func name(_ arguments: ParsedArguments, what: String) throws -> String {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one \(what)") }
        return arguments.positionals[0]
    }

    static func path(_ url: URL) -> String { TerminalText.field(url.path) }
}
