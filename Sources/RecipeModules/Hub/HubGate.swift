import Foundation
import HubClient
import ScriptHost

/// Capabilities gating (docs/design.md): the manifest's `needs` against the caller's
/// Capabilities before the body runs, each binding's permission against `needs`, and a
/// server 403 turned into a clear error after refreshing Capabilities.
public enum HubGate {
    /// Why a run may not start: the permissions the caller lacks, or, for an API key
    /// whose permissions are not known, the write permissions the recipe needs. Exit code 3.
    public struct Denied: Error, Sendable, CustomStringConvertible {
        public enum Reason: Sendable, Equatable {
            /// The caller's Capabilities (a user session's) lack `missing`.
            case missing
            /// The profile's API key lacks `missing`, by the permissions the profile
            /// declares (`declared`) or the key's record.
            case keyLacks(declared: Bool)
            /// The profile's API key has no known permissions (neither declared nor read
            /// from its record: `recordUnreadable` says why the record gave none) and
            /// the recipe writes: `missing` are its write permissions, none confirmed.
            case unknownPermissions(recordUnreadable: String?)
            /// The key's record (`keyID`) says it is not active (`status`): it can do nothing.
            case keyInactive(keyID: String, status: String)
        }

        public let missing: [String]
        public let profile: String
        public var reason: Reason = .missing

        /// The stable code of the `--json` error: `capability_denied`, or
        /// `capabilities_unknown` when the key's permissions are not known.
        public var code: String {
            switch reason {
            case .unknownPermissions: return "capabilities_unknown"
            case .keyInactive: return "api_key_inactive"
            case .missing, .keyLacks: return "capability_denied"
            }
        }

        public var description: String {
            if case .unknownPermissions(let unreadable) = reason {
                return HubGate.unknownPermissionsMessage(profile: profile, writes: missing, recordUnreadable: unreadable)
            }
            if case .keyInactive(let keyID, let status) = reason {
                return "capability denied: profile '\(profile)' uses the API key \(keyID), whose record says it is \(status): "
                    + "it can do nothing; nothing ran.\n"
                    + "Give the profile a live key (hubscript keys list --profile SESSION_PROFILE --all shows each key's status)."
            }
            if case .keyLacks(let declared) = reason {
                let them = missing.count == 1 ? "it" : "them"
                return "capability denied: profile '\(profile)' uses an API key that lacks what the recipe needs: "
                    + "\(missing.joined(separator: ", ")); nothing ran.\n"
                    + (declared
                        ? "Its permissions are the profile's api_key_permissions: if the key was given \(them) since, print the line "
                            + "again (hubscript keys show KEY_ID --profile SESSION_PROFILE). Otherwise ask"
                        : "Its permissions are those of its record (api_key_id): ask")
                    + " an administrator to give the key \(them), or use a profile whose key holds \(them)."
            }
            var text = "capability denied: profile '\(profile)' lacks what the recipe needs:"
            for permission in missing {
                let roles = Capabilities.seedRoles(granting: permission)
                text += "\n  \(permission) — granted by \(roles.isEmpty ? "no seed role" : roles.joined(separator: " or "))"
            }
            return text + "\nAsk an administrator for a role that grants it, or use a profile that has it."
        }
    }

    /// Permissions that no binding that writes needs: a recipe whose Hub needs are all
    /// among them only reads. Every other permission (including one added to the
    /// catalogue later) counts as a write permission.
    public static let readOnlyPermissions: Set<String> = ["users.list", "audit.view"]

    /// The members of `needs` that let a recipe write to the Hub, in the order given.
    public static func writePermissions(in needs: [String]) -> [String] {
        LocalCapabilities.hubPermissions(in: needs).filter { !readOnlyPermissions.contains($0) }
    }

    /// Why a recipe that writes does not start with an API key whose permissions are not
    /// known, and the three ways to go on.
    static func unknownPermissionsMessage(profile: String, writes: [String], recordUnreadable: String?) -> String {
        var text = """
            capability denied: profile '\(profile)' uses an API key whose permissions hubscript does not know, \
            and this recipe writes (it needs \(writes.joined(separator: ", "))); nothing ran.
            """
        if let recordUnreadable {
            let reason = recordUnreadable.hasSuffix(".") ? String(recordUnreadable.dropLast()) : recordUnreadable
            text += "\nThe profile's api_key_id did not give the key's permissions: \(reason)."
        }
        text += """

            hubscript never assumes what a key may do. Say it in the profile '\(profile)', one of:
              api_key_permissions = { … }   the key's permissions; print the line from its record with a user session:
                                            hubscript keys show KEY_ID --profile SESSION_PROFILE
              api_key_id = "key_…", api_key_record_profile = "SESSION_PROFILE"
                                            read the key's record with that user session before each run
              gate = "hub"                  run without knowing them: the Hub's 403s are the only gate, so a run
                                            may stop half-way at a permission the key lacks (it can be resumed)
            """
        return text
    }

    /// The names in `needs` that are not platform permissions (docs/hub-api.md), each
    /// with a did-you-mean hint (`" (did you mean 'users.list'?)"` or `""`).
    public static func unknownPermissions(in needs: [String]) -> [(name: String, hint: String)] {
        let known = knownPermissions
        return needs.filter { !known.contains($0) }.map { ($0, DidYouMean.hint(for: $0, among: known)) }
    }

    /// Checks `needs` against the caller's Capabilities (fetched fresh). An API key whose
    /// permissions are not known passes only a recipe that reads (`writePermissions` is
    /// empty): the returned note says so, for the run's warnings. A profile that chose the
    /// Hub as the only gate passes every recipe. Throws `Denied`.
    @discardableResult
    public static func checkNeeds(_ needs: [String], client: HubClient, profile: String) throws -> String? {
        let needs = LocalCapabilities.hubPermissions(in: needs)
        guard !needs.isEmpty else { return nil }
        let capabilities = try client.capabilities(refresh: true)
        if capabilities.keyInactive, let keyID = capabilities.keyID, let status = capabilities.keyStatus {
            throw Denied(missing: needs, profile: profile, reason: .keyInactive(keyID: keyID, status: TerminalText.field(status)))
        }
        switch capabilities.source {
        case .apiKeyHubGate:
            return nil
        case .apiKeyUnknown:
            let writes = writePermissions(in: needs)
            guard writes.isEmpty else {
                throw Denied(missing: writes, profile: profile,
                             reason: .unknownPermissions(recordUnreadable: capabilities.recordUnreadable))
            }
            return "profile '\(profile)' does not say which permissions its API key holds; this recipe only reads "
                + "(\(needs.joined(separator: ", "))), so it ran and the Hub decided what it could read. A recipe that writes "
                + "will not start until the profile declares them (api_key_permissions; hubscript keys show KEY_ID "
                + "--profile SESSION_PROFILE prints the line) or sets gate = \"hub\"."
        case .apiKeyDeclared, .apiKeyRecord:
            let missing = capabilities.missing(needs)
            if !missing.isEmpty {
                throw Denied(missing: missing, profile: profile, reason: .keyLacks(declared: capabilities.source == .apiKeyDeclared))
            }
            return nil
        case .userSession:
            let missing = capabilities.missing(needs)
            if !missing.isEmpty { throw Denied(missing: missing, profile: profile) }
            return nil
        }
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

    /// A 403 from the Hub: refreshes Capabilities and says what is missing now and, for
    /// a run that sends writes, that the run can be resumed and how.
    static func forbidden(_ error: HubError, binding: String, context: HubRunContext) -> ScriptStructuredError {
        let required = error.details?["required_permission"]?.stringValue
        var message = "the Hub refused \(binding): \(error.message)"
        if let required {
            let capabilities = try? context.client.capabilities(refresh: true)
            if capabilities?.permissionsUnknown == true {
                message += " (it needs \(required); this profile does not say which permissions its key holds, so the Hub is the gate)"
            } else if capabilities?.source == .apiKeyDeclared && capabilities?.has(required) == true {
                message += " (it needs \(required), which the profile's api_key_permissions declare, but the key lacks it: "
                    + "print the line again with hubscript keys show KEY_ID --profile SESSION_PROFILE)"
            } else if capabilities?.has(required) == true {
                message += " (it needs \(required), which your Capabilities still list: the Hub is the authority)"
            } else {
                message += " (it needs \(required), which this profile no longer holds)"
            }
        }
        if let resume = resumeHint(context.writes, required: required) { message += ". " + resume }
        var structured = error.scriptError
        structured.message = message
        return structured
    }

    /// For a run that sends writes (not a plan) and has made some: they are journalled,
    /// and the command that finishes the run once the profile holds `required`.
    static func resumeHint(_ writes: WriteCoordinator, required: String?) -> String? {
        if case .plan = writes.mode { return nil }
        let made = writes.counts.writes - writes.counts.failed + writes.counts.replayed
        guard made > 0 else { return nil }
        let sofar = "The \(made) write\(made == 1 ? "" : "s") made before it \(made == 1 ? "is" : "are") journalled and will not be repeated"
        let when = required.map { "once the profile holds \($0)" } ?? "once the profile may make this call"
        return "\(sofar); the run can be resumed \(when): hubscript runs resume \(writes.runID)"
    }
}
