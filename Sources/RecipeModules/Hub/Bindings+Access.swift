import Foundation
import HubClient
import ScriptHost

extension Bindings {
    static let entitlementFilters = ["application_id", "status", "user_id", "organization_id", "source", "include_inactive"]
    static let auditFilters = ["target_user_id", "target_type", "target_id", "actor_id", "actor_type", "action",
                               "application_id", "organization_id", "since", "until"]

    /// A PATCH of an entitlement's status, re-applied after a version conflict only
    /// while the entitlement is not already in the target status.
    func setStatus(_ call: BindingCall, _ status: String, reason: String?, summary: String) throws -> ScriptValue {
        let id = try call.id(1)
        var body: [String: HubJSON] = ["status": .string(status)]
        if let reason { body["disabled_reason"] = .string(reason) }
        return try write(call, optionsAt: reason == nil ? 2 : 3, .patch, "/entitlements/\(segment(id))", body: .object(body),
                         summary: summary, predicted: ["id": .string(id), "status": .string(status)],
                         stillApplies: { fresh in fresh["status"]?.stringValue != status })
    }

    var entitlements: [ScriptFunction] {
        [
            list("entitlements.list", "users.list", "hub.entitlements.list{application_id, status, user_id, organization_id, source, include_inactive} -> iterator") { call in
                ("/entitlements", try call.query(1, allowed: Self.entitlementFilters))
            },
            list("entitlements.for_user", "users.list", "hub.entitlements.for_user(user_id, {application_id, status, source, include_inactive}) -> iterator") { call in
                ("/users/\(segment(try call.id(1)))/entitlements",
                 try call.query(2, allowed: ["application_id", "status", "source", "include_inactive"]))
            },
            fn("entitlements.get", "users.list", "hub.entitlements.get(id) -> entitlement") { call, ctx in
                try ctx.get("/entitlements/\(segment(try call.id(1)))")
            },
            fn("entitlements.grant", "entitlements.manage", writes: true,
               "hub.entitlements.grant(user_id, {application_id, source = \"admin_grant\", starts_at?, ends_at?}, opts) -> entitlement") { call, _ in
                let user = try call.id(1)
                var fields = try call.fields(2)
                guard let app = try call.field(fields, "application_id", at: 2, max: HubArgumentLimits.id) else {
                    throw call.argumentError(2, "field 'application_id' (a string) is required")
                }
                if fields["source"] == nil { fields["source"] = "admin_grant" }
                return try write(call, optionsAt: 3, .post, "/users/\(segment(user))/entitlements", body: try call.body(fields, at: 2),
                                 summary: "grant \(app) to \(user)",
                                 predicted: ["user_id": .string(user), "application_id": .string(app), "status": "active"],
                                 creates: CreatedID(prefix: "ent"))
            },
            fn("entitlements.disable", "entitlements.manage", writes: true, "hub.entitlements.disable(id, reason, opts) -> entitlement") { call, _ in
                let id = try call.id(1)
                return try setStatus(call, "disabled", reason: try call.text(2, "reason", max: HubArgumentLimits.entitlementReason),
                                     summary: "disable \(id)")
            },
            fn("entitlements.revoke", "entitlements.manage", writes: true, "hub.entitlements.revoke(id, reason, opts) -> entitlement (terminal)") { call, _ in
                let id = try call.id(1)
                return try setStatus(call, "revoked", reason: try call.text(2, "reason", max: HubArgumentLimits.entitlementReason),
                                     summary: "revoke \(id)")
            },
            fn("entitlements.enable", "entitlements.manage", writes: true, "hub.entitlements.enable(id, opts) -> entitlement (disabled → active)") { call, _ in
                try setStatus(call, "active", reason: nil, summary: "re-enable \(try call.id(1))")
            },
        ]
    }

    var sessions: [ScriptFunction] {
        [
            list("sessions.list", "users.list", "hub.sessions.list(user_id) -> iterator of live sessions") { call in
                ("/users/\(segment(try call.id(1)))/sessions", [])
            },
            fn("sessions.revoke", "users.manage", writes: true, "hub.sessions.revoke(user_id, session_id, opts) -> true") { call, _ in
                let (user, session) = (try call.id(1), try call.id(2))
                return try write(call, optionsAt: 3, .delete, "/users/\(segment(user))/sessions/\(segment(session))",
                                 summary: "revoke session \(session) of \(user)", predicted: .bool(true))
            },
        ]
    }

    var apiKeys: [ScriptFunction] {
        [
            list("api_keys.list", "api_keys.manage", "hub.api_keys.list{owner_user_id} -> iterator of live keys") { call in
                ("/api-keys", try call.query(1, allowed: ["owner_user_id", "status", "include_inactive"]))
            },
            fn("api_keys.revoke", "api_keys.manage", writes: true, "hub.api_keys.revoke(id, opts) -> true") { call, _ in
                let id = try call.id(1)
                return try write(call, optionsAt: 2, .delete, "/api-keys/\(segment(id))", summary: "revoke API key \(id)",
                                 predicted: .bool(true))
            },
        ]
    }

    var organizations: [ScriptFunction] {
        [
            list("organizations.list", nil, "hub.organizations.list() -> iterator (yours; all with organizations.manage)") { _ in
                ("/organizations", [])
            },
            list("organizations.members", "organizations.manage", "hub.organizations.members(org_id) -> iterator") { call in
                ("/organizations/\(segment(try call.id(1)))/members", [])
            },
            fn("organizations.remove_member", "organizations.manage", writes: true,
               "hub.organizations.remove_member(org_id, user_id, opts) -> true") { call, _ in
                let (org, user) = (try call.id(1), try call.id(2))
                return try write(call, optionsAt: 3, .delete, "/organizations/\(segment(org))/members/\(segment(user))",
                                 summary: "remove \(user) from \(org)", predicted: .bool(true))
            },
        ]
    }

    var audit: [ScriptFunction] {
        [
            list("audit.query", "audit.view", "hub.audit.query{target_user_id, target_type, target_id, actor_id, actor_type, action (string or list), application_id, organization_id, since, until} -> iterator") { call in
                ("/audit-events", try call.query(1, allowed: Self.auditFilters))
            },
            fn("audit.get", "audit.view", "hub.audit.get(id) -> event") { call, ctx in
                try ctx.get("/audit-events/\(segment(try call.id(1)))")
            },
            list("inbox.list", nil, "hub.inbox.list{category (a prefix such as \"security.\"), since, state, include_inactive} -> iterator over the caller's notifications (archived ones only with state or include_inactive)") { call in
                ("/users/me/notifications", try call.query(1, allowed: ["category", "since", "state", "include_inactive"]))
            },
        ]
    }
}
