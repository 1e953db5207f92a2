import Foundation
import HubClient
import ScriptHost

/// Capabilities gating (docs/design.md): the manifest's `needs` against the caller's
/// Capabilities before the body runs, each binding's permission against `needs`, and a
/// server 403 turned into a clear error after refreshing Capabilities.
public enum HubGate {
    /// Why a run may not start: the permissions the caller lacks. Exit code 3.
    public struct Denied: Error, Sendable, CustomStringConvertible {
        public let missing: [String]
        public let profile: String
        public var description: String {
            var text = "capability denied: profile '\(profile)' lacks what the recipe needs:"
            for permission in missing {
                let roles = Capabilities.seedRoles(granting: permission)
                text += "\n  \(permission) — granted by \(roles.isEmpty ? "no seed role" : roles.joined(separator: " or "))"
            }
            return text + "\nAsk an administrator for a role that grants it, or use a profile that has it."
        }
    }

    /// The names in `needs` that are not platform permissions (docs/hub-api.md), each
    /// with a did-you-mean hint (`" (did you mean 'users.list'?)"` or `""`).
    public static func unknownPermissions(in needs: [String]) -> [(name: String, hint: String)] {
        let known = knownPermissions
        return needs.filter { !known.contains($0) }.map { ($0, DidYouMean.hint(for: $0, among: known)) }
    }

    /// Checks `needs` against the caller's Capabilities (fetched fresh).
    public static func checkNeeds(_ needs: [String], client: HubClient, profile: String) throws {
        let needs = LocalCapabilities.hubPermissions(in: needs)
        guard !needs.isEmpty else { return }
        let missing = try client.capabilities(refresh: true).missing(needs)
        if !missing.isEmpty { throw Denied(missing: missing, profile: profile) }
    }

    /// The run's gate: a binding may run only if the manifest declares its permission.
    public static func bindingGate(needs: [String]) -> @Sendable (ScriptFunction) throws -> Void {
        let declared = Set(needs)
        return { function in
            guard let permission = function.capability, !declared.contains(permission) else { return }
            throw ScriptStructuredError(
                code: "permission_not_declared",
                message: "\(LocalCapabilities.qualifiedName(of: function)) needs '\(permission)', which this recipe's manifest does not declare; add \"\(permission)\" to needs",
                fields: ["permission": .string(permission)])
        }
    }

    /// A 403 from the Hub: refreshes Capabilities and says what is missing now.
    static func forbidden(_ error: HubError, binding: String, context: HubRunContext) -> ScriptStructuredError {
        let required = error.details?["required_permission"]?.stringValue
        var message = "the Hub refused \(binding): \(error.message)"
        if let required {
            let stillHeld = (try? context.client.capabilities(refresh: true).has(required)) ?? false
            message += stillHeld
                ? " (it needs \(required), which your Capabilities still list: the Hub is the authority)"
                : " (it needs \(required), which this profile no longer holds)"
        }
        var structured = error.scriptError
        structured.message = message
        return structured
    }
}
