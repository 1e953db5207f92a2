import SystemText
import Foundation
import HubClient
import ScriptHost
import Vault

/// Secrets from the encrypted vault (Sources/Vault): opened on first use with the key
/// `key` gives, kept open for the run. Each value read is registered with
/// `SecretRedactor.shared` before it is returned.
///
/// Errors, as structured errors a recipe (or `--json`) sees: `vault_not_open` (no vault
/// in `folder`), `vault_locked` (no key), `secret_not_found`, `vault_error` (wrong key,
/// tampered, truncated … with the vault's own message).
public final class VaultSecretResolver: SecretResolver, @unchecked Sendable {
    public let folder: URL
    private let key: @Sendable () throws -> VaultKeySource?
    private let options: VaultOptions
    /// An NSLock, not a Mutex: it serialises every use of the vault (not Sendable),
    /// and what `withVault` returns (an object writer) leaves the locked section.
    private let lock = NSLock()
    private var opened: Result<Vault, ScriptStructuredError>?

    /// `key` returns nil when no key was given (then reading a secret fails with `vault_locked`).
    public init(folder: URL, options: VaultOptions = VaultOptions(), key: @escaping @Sendable () throws -> VaultKeySource?) {
        self.folder = folder
        self.options = options
        self.key = key
    }

    /// Whether a vault exists in `folder` (its index file).
    public var exists: Bool {
        FileManager.default.fileExists(atPath: folder.appendingPathComponent(Vault.indexFileName).path)
    }

    public func value(of name: String) throws -> String {
        let vault = try open()
        let bytes: SecretBytes
        do { bytes = try lock.withLock { try vault.secret(named: name) } } catch let error as VaultError {
            if error.code == .notFound {
                throw ScriptStructuredError(code: "secret_not_found", message:
                    "no vault entry '\(name)' in \(folder.path): add it with `hubscript vault set \(name)` (the value is read from stdin)")
            }
            throw Self.structured(error)
        }
        return bytes.withUnsafeBytes { raw in
            SecretRedactor.shared.register(raw, name: name)
            return String(decoding: raw, as: UTF8.self)
        }
    }

    /// The vault, opened with the key (once per resolver). Throws the structured
    /// errors above (`vault_not_open`, `vault_locked`, `vault_error`). Callers that use
    /// it from several threads serialise through `withVault`.
    public func withVault<T>(_ body: (Vault) throws -> T) throws -> T {
        let vault = try open()
        return try lock.withLock { try body(vault) }
    }

    private func open() throws -> Vault {
        try lock.withLock {
            if let opened { return try opened.get() }
            let result: Result<Vault, ScriptStructuredError>
            do {
                guard exists else {
                    throw ScriptStructuredError(code: "vault_not_open", message:
                        "no vault in \(folder.path): create one with `hubscript vault init`, then `hubscript vault set NAME`")
                }
                guard let source = try key() else {
                    throw ScriptStructuredError(code: "vault_locked", message:
                        "the vault in \(folder.path) is locked: set HUBSCRIPT_VAULT_KEY (or HUBSCRIPT_VAULT_KEY_FILE, or HUBSCRIPT_VAULT_PASSPHRASE)")
                }
                result = .success(try Vault.open(at: folder, key: source, options: options))
            } catch let error as ScriptStructuredError {
                result = .failure(error)
            } catch let error as VaultError {
                result = .failure(Self.structured(error))
            } catch {
                result = .failure(ScriptStructuredError(code: "vault_error", message: "cannot open the vault in \(folder.path): \(error)"))
            }
            opened = result
            return try result.get()
        }
    }

    static func structured(_ error: VaultError) -> ScriptStructuredError {
        ScriptStructuredError(code: "vault_error", message: error.message, fields: ["reason": .string(error.code.rawValue)])
    }
}

/// A profile's `api_key_ref` read from the vault: the resolver's structured errors
/// become `HubError`s with the same code, so the CLI reports them as configuration
/// problems (exit code 2).
extension VaultSecretResolver: HubSecretLookup {
    public func secret(named name: String) throws -> String {
        do { return try value(of: name) } catch let e as ScriptStructuredError {
            throw HubError(code: e.code, message: e.message,
                           hint: "For CI, api_key_env = \"VARIABLE\" reads the key from the environment instead.")
        }
    }
}
