import SystemText
import ScriptHost

/// Gives the bindings that take credentials the value behind a secret handle.
///
/// Contract: `value(of:)` returns the value of vault entry `name` and, before
/// returning, registers it with `SecretRedactor.shared`, so nothing the process writes
/// afterwards can show it. It throws `ScriptStructuredError` `secret_not_found` (no such
/// entry) or `vault_locked` (no key given) with what to do. Values never reach Lua:
/// recipes hold `ScriptHandle`s of kind `secret` (see the `vault` plugin).
public protocol SecretResolver: Sendable {
    func value(of name: String) throws -> String
    /// This resolver as a store of new secrets, if it is one (nil by default; every
    /// `SecretStore` is itself). A requirement rather than an `as? any SecretStore` cast,
    /// which scans every protocol conformance of the binary at a run's start.
    var asStore: (any SecretStore)? { get }
}

extension SecretResolver {
    public var asStore: (any SecretStore)? { nil }
}

/// Secrets from a fixed table (tests, and `HUBSCRIPT_SECRET_<NAME>`-style set-ups).
public struct FixedSecrets: SecretResolver {
    private let values: [String: String]

    public init(_ values: [String: String]) { self.values = values }

    public func value(of name: String) throws -> String {
        guard let value = values[name] else {
            throw ScriptStructuredError(code: "secret_not_found", message:
                "no vault entry '\(name)': add it with `hubscript vault set \(name)` (the value is read from stdin)")
        }
        let bytes = Array(value.utf8)
        bytes.withUnsafeBytes { SecretRedactor.shared.register($0, name: name) }
        return value
    }
}

extension ScriptHandle {
    /// The kind of the handles `vault.secret` returns.
    public static let secretKind = "secret"

    /// The kind of the handles a binding returns for a secret it stored (a new API key's:
    /// `<stored secret hub/keys/ci>`). No binding takes these as a credential: a recipe
    /// sends only secrets its manifest declares (`vault.secret` of a declared entry), so a
    /// key it created cannot leave the run through `dispatch.connect` unseen.
    public static let storedSecretKind = "stored secret"

    /// The vault entry this handle names, if it is a secret handle (`vault.secret`'s).
    public var secretName: String? { kind == Self.secretKind ? name : nil }
}
