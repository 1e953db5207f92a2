import Foundation
import ScriptHost

/// What a caller lets a recipe ask for: a job's or a trigger's `allow = { … }` in the
/// configuration, or `--allow perm,perm` on the command line. A manifest whose `needs`
/// go beyond it is refused before anything runs (`NotAllowed`, exit code 3); since
/// every binding is gated by `needs`, the recipe can then do no more than allowed —
/// however its library changes.
public struct AllowedPermissions: Sendable, Equatable {
    public let permissions: [String]
    /// Who set them, in words: `job "nightly"`, `trigger "offboarded"`, `--allow`.
    public let caller: String

    public init(_ permissions: [String], caller: String) {
        self.permissions = permissions
        self.caller = caller
    }

    /// Why `names` cannot be an allow list (an unknown permission, with a did-you-mean),
    /// or nil when every name is a permission.
    public static func problem(in names: [String]) -> String? {
        guard let (name, hint) = HubGate.unknownPermissions(in: names).first else { return nil }
        return "allow: unknown permission '\(name)'\(hint) (known permissions: \(HubGate.knownPermissions.joined(separator: ", ")))"
    }

    /// Throws `NotAllowed` when `needs` names a permission outside the list.
    public func check(needs: [String]) throws {
        let missing = needs.filter { !permissions.contains($0) }
        if !missing.isEmpty { throw NotAllowed(missing: missing, allowed: self) }
    }
}

/// A recipe that needs more than its caller allows: nothing ran. Exit code 3.
public struct NotAllowed: Error, Sendable, CustomStringConvertible {
    /// The manifest's needs outside the allow list, in the manifest's order.
    public let missing: [String]
    public let allowed: AllowedPermissions

    public var description: String {
        let allowed = self.allowed.permissions.isEmpty ? "nothing" : self.allowed.permissions.joined(separator: ", ")
        return "not allowed: the recipe needs \(missing.joined(separator: ", ")), beyond what \(self.allowed.caller) allows "
            + "(\(allowed)); nothing ran. Add \(missing.count == 1 ? "it" : "them") to the allow list if the recipe should have \(missing.count == 1 ? "it" : "them")."
    }

    /// The `error` field of a `--json` error event.
    public var structured: ScriptValue {
        .object(["code": "not_allowed", "caller": .string(allowed.caller),
                 "missing": .array(missing.map(ScriptValue.string)),
                 "allowed": .array(allowed.permissions.map(ScriptValue.string))])
    }
}
