import Foundation
import SystemText
import HubClient
import Vault
import Secrets
import Synchronization

/// How runs and commands other than `hubscript vault` reach the vault: its folder
/// (`$HUBSCRIPT_VAULT_DIR`, else `vault/` in the state directory) and its key from the
/// command line's `--key-file` (`VaultKeyFileOption`) or the environment
/// (`$HUBSCRIPT_VAULT_KEY`, `$HUBSCRIPT_VAULT_KEY_FILE`, `$HUBSCRIPT_VAULT_PASSPHRASE`):
/// a run never prompts. The vault is opened when a
/// recipe first reads a secret (or a profile's `api_key_ref`, a session, a `vault:`
/// export needs it), not before, and once per process.
enum VaultAccess {
    static func folder(state: StateDirectory, environment: [String: String] = ProcessEnvironment.all) -> URL {
        URL(fileURLWithPath: folderPath(state: state, environment: environment), isDirectory: true)
    }

    /// The vault folder's absolute path (a string: see `StateDirectory.path`).
    static func folderPath(state: StateDirectory, environment: [String: String] = ProcessEnvironment.all) -> String {
        if let dir = environment["HUBSCRIPT_VAULT_DIR"], !dir.isEmpty { return AbsolutePath.of(dir) }
        return StateDirectory.join(state.path, "vault")
    }

    /// The process's resolver for the vault of `state` (one per folder, so the vault is
    /// unlocked once however many parts of the command read it).
    static func resolver(state: StateDirectory) -> VaultSecretResolver {
        let folder = folderPath(state: state)
        return shared.withLock { shared in
            if let known = shared.resolvers[folder] { return known }
            let made = VaultSecretResolver(folder: URL(fileURLWithPath: folder, isDirectory: true), options: VaultCommands.options(state: state)) {
                if let file = VaultKeyFileOption.current { return .keyFile(file) }
                if let key = try VaultKeyMaterial.environmentKey("HUBSCRIPT_VAULT_KEY") { return .key(key) }
                if let file = ProcessEnvironment.value("HUBSCRIPT_VAULT_KEY_FILE"), !file.isEmpty { return .keyFile(file) }
                if let phrase = try VaultKeyMaterial.environmentPassphrase("HUBSCRIPT_VAULT_PASSPHRASE") { return .passphrase(phrase) }
                return nil
            }
            shared.resolvers[folder] = made
            return made
        }
    }

    /// The process's resolvers by vault folder, and whether the vault hint was shown.
    private static let shared = Mutex<(resolvers: [String: VaultSecretResolver], hintShown: Bool)>(([:], false))

    /// Opens the profile `name` of `config` with the vault: a profile's `api_key_ref` is
    /// read from it, and a session profile keeps its session in it when a vault exists
    /// (a session still in a file is moved in, which is said on stderr; without a vault,
    /// files, and `fileHint` hears the hint that says so). A profile with its API key in
    /// plain text gets a one-line hint, once per process, unless `quiet`.
    static func connect(config: HubConfig, profile name: String?, state: StateDirectory, quiet: Bool,
                        fileHint: ((String) -> Void)? = nil,
                        observe: (@Sendable (HubClientEvent) -> Void)? = nil) throws -> HubConnection {
        let resolver = resolver(state: state)
        var store: (any CredentialStore)?
        if case (_, .hub(let profile)) = try config.profile(named: name), case .session = profile.auth {
            let choice = try SessionStorage.choose(profile: profile.name, resolver: resolver,
                                                   files: FileCredentialStore(directory: try state.credentials))
            store = choice.store
            if let notice = choice.notice {
                if choice.inVault { Console.err(notice + "\n") } else { fileHint?(notice) }
            }
        }
        let connection = try HubConnection.open(config: config, profile: name, state: state, embeddedHub: EmbeddedSandbox(),
                                                credentialStore: store, secrets: resolver, observe: observe)
        if let hint = connection.hint, !quiet, shared.withLock({ s in defer { s.hintShown = true }; return !s.hintShown }) {
            Console.err(hint + "\n")
        }
        return connection
    }
}
