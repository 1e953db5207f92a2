import Foundation
import HubBindings
import HubClient
import Vault

/// How runs and commands other than `hubscript vault` reach the vault: its folder
/// (`$HUBSCRIPT_VAULT_DIR`, else `vault/` in the state directory) and its key from the
/// environment only (`$HUBSCRIPT_VAULT_KEY`, `$HUBSCRIPT_VAULT_KEY_FILE`,
/// `$HUBSCRIPT_VAULT_PASSPHRASE`): a run never prompts. The vault is opened when a
/// recipe first reads a secret, not before.
enum VaultAccess {
    static func folder(state: StateDirectory, environment: [String: String] = ProcessInfo.processInfo.environment) -> URL {
        if let dir = environment["HUBSCRIPT_VAULT_DIR"], !dir.isEmpty { return URL(fileURLWithPath: dir, isDirectory: true) }
        return state.url.appendingPathComponent("vault", isDirectory: true)
    }

    static func resolver(state: StateDirectory) -> VaultSecretResolver {
        VaultSecretResolver(folder: folder(state: state), options: VaultCommands.options) {
            if let key = try VaultKeyMaterial.environmentKey("HUBSCRIPT_VAULT_KEY") { return .key(key) }
            if let file = ProcessInfo.processInfo.environment["HUBSCRIPT_VAULT_KEY_FILE"], !file.isEmpty { return .keyFile(file) }
            if let phrase = try VaultKeyMaterial.environmentPassphrase("HUBSCRIPT_VAULT_PASSPHRASE") { return .passphrase(phrase) }
            return nil
        }
    }
}
