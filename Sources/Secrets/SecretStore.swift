import SystemText
import Foundation
import Synchronization
import ScriptHost
import Vault

/// A `SecretResolver` that can also store: where a binding puts a secret the Hub hands
/// out once (a new API key's secret), so that it reaches the vault and never the recipe.
///
/// Contract: `store(_:as:)` registers `value` with `SecretRedactor.shared` *before*
/// anything else (so no output, journal or plan written afterwards can show it), then
/// writes it as the entry `name` (replacing an older value). It throws
/// `ScriptStructuredError` `invalid_secret_name` for a name the vault refuses, or the
/// resolver's own errors (`vault_not_open`, `vault_locked`, `vault_error`).
public protocol SecretStore: SecretResolver {
    func store(_ value: String, as name: String) throws
}

extension SecretStore {
    public var asStore: (any SecretStore)? { self }

    /// Checks `name` as the vault does; `invalid_secret_name` with its rule otherwise.
    public static func checkName(_ name: String) throws {
        do { try VaultName.validate(name) } catch let error as VaultError {
            throw ScriptStructuredError(code: "invalid_secret_name", message: error.message, fields: ["secret": .string(name)])
        }
    }
}

extension VaultSecretResolver: SecretStore {
    public func store(_ value: String, as name: String) throws {
        Array(value.utf8).withUnsafeBytes { SecretRedactor.shared.register($0, name: name) }
        try Self.checkName(name)
        let bytes = try SecretBytes(copying: Array(value.utf8))
        do { try withVault { _ = try $0.setSecret(name, value: bytes) } } catch let error as VaultError {
            throw Self.structured(error)
        }
    }
}

/// Secrets kept in memory for the life of the process: `hubscript test` sandboxes and
/// tests. Values stored are registered with `SecretRedactor.shared` as the vault's are.
public final class MemorySecrets: SecretStore, Sendable {
    private let values: Mutex<[String: String]>

    public init(_ values: [String: String] = [:]) { self.values = Mutex(values) }

    public func value(of name: String) throws -> String {
        guard let value = values.withLock({ $0[name] }) else {
            throw ScriptStructuredError(code: "secret_not_found", message:
                "no vault entry '\(name)': add it with `hubscript vault set \(name)` (the value is read from stdin)")
        }
        Array(value.utf8).withUnsafeBytes { SecretRedactor.shared.register($0, name: name) }
        return value
    }

    public func store(_ value: String, as name: String) throws {
        Array(value.utf8).withUnsafeBytes { SecretRedactor.shared.register($0, name: name) }
        try Self.checkName(name)
        values.withLock { $0[name] = value }
    }

    /// The names stored, sorted (never a value).
    public var names: [String] { values.withLock { $0.keys.sorted() } }
}
