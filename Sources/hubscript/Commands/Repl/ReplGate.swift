import HubClient
import Synchronization
import ScriptHost
import RecipeModules

/// What `hubscript eval` and `repl` may call. They have no manifest, so no `needs`:
///
/// - a binding that only reads may always be called: the Hub answers with what the
///   profile may see, and refuses the rest (the refusal reads as a Hub error);
/// - a binding that writes may be called in a session whose writes are planned (the
///   default): the write is recorded and shown, never sent;
/// - with `--apply`, a binding that writes is checked as a recipe's `needs` would be
///   (`HubGate.checkNeeds`, the profile's Capabilities or its key's permissions) the
///   first time its permission is used; a permission the profile lacks refuses the call.
///
/// Everything else about a run holds: limits, the journal, the Hub's own checks.
enum ReplGate {
    static func make(applying: Bool, connection: HubConnection) -> @Sendable (ScriptFunction) throws -> Void {
        let granted = GrantedPermissions()
        return { function in
            guard applying, function.writes, let permission = function.capability else { return }
            if granted.contains(permission) { return }
            do {
                try HubGate.checkNeeds([permission], client: connection.client, profile: connection.profileName)
            } catch let denied as HubGate.Denied {
                throw ScriptStructuredError(code: denied.code, message: refusal(denied, function: function, permission: permission),
                                            fields: ["permission": .string(permission)])
            }
            granted.insert(permission)
        }
    }

    /// Why a write of the session was not sent, and what to do (after the error's code,
    /// `capability_denied:` or `capabilities_unknown:`).
    static func refusal(_ denied: HubGate.Denied, function: ScriptFunction, permission: String) -> String {
        let call = "hub.\(function.name)"
        switch denied.reason {
        case .unknownPermissions:
            return "profile '\(denied.profile)' uses an API key whose permissions hubscript does not know, "
                + "so a session sends no write with it (\(call) needs '\(permission)'); nothing was sent. Declare them in the "
                + "profile (api_key_permissions = { … }: hubscript keys show KEY_ID --profile SESSION_PROFILE prints the line) "
                + "or set gate = \"hub\""
        case .keyInactive:
            return denied.description
        case .missing, .keyLacks:
            return "\(call) needs '\(permission)', which profile '\(denied.profile)' does not hold; "
                + "nothing was sent. Use a profile that holds it, or leave out --apply to see the write planned"
        }
    }
}

/// The write permissions a session has checked and found held.
private final class GrantedPermissions: Sendable {
    private let names = Mutex(Set<String>())
    func contains(_ name: String) -> Bool { names.withLock { $0.contains(name) } }
    func insert(_ name: String) { names.withLock { _ = $0.insert(name) } }
}
