import HubClient
import ScriptHost

/// Permissions a recipe declares in `needs` that the Hub does not grant: they gate
/// bindings that talk to other services (Dispatch). Declaring one is all it takes — the
/// run's credentials for that service come from the profile or the vault — but a binding
/// whose permission the manifest does not declare is refused (`permission_not_declared`)
/// like any `hub` binding, so a shared recipe's header still says everything it can do.
public enum LocalCapabilities {
    /// Each local permission and the module whose bindings it gates.
    public static let modules: [String: String] = ["dispatch.send": "dispatch"]

    /// Every local permission, sorted.
    public static var permissions: [String] { modules.keys.sorted() }

    /// The members of `needs` the Hub is asked about (the local ones left out).
    public static func hubPermissions(in needs: [String]) -> [String] {
        needs.filter { modules[$0] == nil }
    }

    /// `dispatch.send` for the `send` binding of the dispatch module; `hub.users.get` for a hub one.
    static func qualifiedName(of function: ScriptFunction) -> String {
        "\(function.capability.flatMap { modules[$0] } ?? "hub").\(function.name)"
    }
}

extension HubGate {
    /// Every permission `needs` may name: the platform's (docs/hub-api.md) and the local ones.
    public static var knownPermissions: [String] { Capabilities.allPermissions + LocalCapabilities.permissions }
}
