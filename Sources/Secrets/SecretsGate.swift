import SystemText
import ScriptHost

/// The manifest's `secrets = {…}`, checked before the recipe runs, as `needs` are: each
/// declared entry must be readable from the run's vault. Reading them here also loads
/// them into `SecretRedactor` before anything is journalled or shown.
package enum SecretsGate {
    struct Unavailable: Error, CustomStringConvertible {
        let description: String
    }

    package static func check(_ names: [String], secrets: (any SecretResolver)?) throws {
        guard !names.isEmpty else { return }
        let list = names.joined(separator: ", ")
        guard let secrets else {
            throw Unavailable(description: "the recipe declares secrets (\(list)) but this run has no vault to read them from")
        }
        for name in names where name.hasPrefix(VaultCredentialStore.entryPrefix) {
            throw Unavailable(description: "the recipe declares the secret '\(name)', where `hubscript login` keeps a profile's session: no recipe may hold a session")
        }
        for name in names {
            do { _ = try secrets.value(of: name) } catch let error as ScriptStructuredError {
                throw Unavailable(description: "the recipe declares the secret '\(name)', which cannot be read: \(error.code): \(error.message)")
            }
        }
    }
}
