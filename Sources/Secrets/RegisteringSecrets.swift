import ScriptHost
import SystemText

/// A run's view of its secret resolver: every value it hands out or stores is also
/// registered in the run's redactor (and so, through its parent, in the process's)
/// before it goes anywhere, whichever redactor the resolver itself registers in.
public struct RegisteringSecrets: SecretStore {
    /// The resolver wrapped (for what needs the vault itself: `vault:` exports).
    public let resolver: any SecretResolver
    let redactor: SecretRedactor

    public init(_ resolver: any SecretResolver, into redactor: SecretRedactor) {
        self.resolver = resolver
        self.redactor = redactor
    }

    public func value(of name: String) throws -> String {
        let value = try resolver.value(of: name)
        Array(value.utf8).withUnsafeBytes { redactor.register($0, name: name) }
        return value
    }

    /// A store only when the resolver is one.
    public var asStore: (any SecretStore)? { resolver.asStore == nil ? nil : self }

    public func store(_ value: String, as name: String) throws {
        Array(value.utf8).withUnsafeBytes { redactor.register($0, name: name) }
        guard let store = resolver.asStore else {
            throw ScriptStructuredError(code: "vault_not_open", message: "no vault to store the secret '\(name)' in")
        }
        try store.store(value, as: name)
    }
}
