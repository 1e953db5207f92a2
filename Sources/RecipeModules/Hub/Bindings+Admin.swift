import Foundation
import HubClient
import ScriptHost

/// The admin bindings of docs/hub-api.md, "The rest of the admin API": user creation and
/// lifecycle, the GDPR export, role management, effective permissions, entitlement changes
/// beyond status, and the caller's inbox state. Writes go through the run's
/// `WriteCoordinator` like every other (derived idempotency key, journal, plan/apply).
extension Bindings {
    static let userCreateFields = ["email", "display_name", "status", "send_invitation"]
    static let roleCreateFields = ["name", "permissions", "description", "scope"]
    static let roleUpdateFields = ["permissions", "description"]
    static let orgGrantFields = ["application_id", "member_scope", "member_overrides", "starts_at", "ends_at"]
    static let entitlementUpdateFields = ["status", "disabled_reason", "ends_at", "source", "member_scope", "member_overrides"]

    var userLifecycle: [ScriptFunction] {
        [
            fn("users.create", "users.manage", writes: true, """
               hub.users.create({email, display_name?, status = "invited" or "active", send_invitation = true}, opts) -> user \
               (409 email_taken when the email is held: err.details.existing_user_id)
               """) { call, _ in
                let fields = try call.fields(1)
                try Self.checkKnown(call, 1, fields, allowed: Self.userCreateFields)
                guard let email = try call.field(fields, "email", at: 1, max: HubArgumentLimits.id) else {
                    throw call.argumentError(1, "field 'email' (a string) is required")
                }
                return try write(call, optionsAt: 2, .post, "/users", body: try call.body(fields, at: 1),
                                 summary: "create user \(email) (\(fields["status"]?.stringValue ?? "invited"))",
                                 predicted: ["email": .string(email.lowercased()),
                                             "status": .string(fields["status"]?.stringValue ?? "invited")],
                                 creates: CreatedID(prefix: "usr"))
            },
            fn("users.resend_invitation", "users.manage", writes: true,
               "hub.users.resend_invitation(id, opts) -> true (only for an invited user: else invalid_status_transition)") { call, _ in
                let id = try call.id(1)
                return try write(call, optionsAt: 2, .post, "/users/\(segment(id))/invitation", body: [:],
                                 summary: "re-send the invitation of \(id)", predicted: .bool(true))
            },
            fn("users.delete", "users.manage", writes: true,
               "hub.users.delete(id, opts) -> true (soft: revokes every session; the user is not_found afterwards)") { call, _ in
                let id = try call.id(1)
                return try write(call, optionsAt: 2, .delete, "/users/\(segment(id))", summary: "delete user \(id)", predicted: .bool(true))
            },
            fn("users.export", "users.manage", """
               hub.users.export(id) -> the GDPR bundle {exported_at, user, profile, settings, identities, sessions, \
               organizations, roles, applications, audit_events}; keep it private: `export.jsonl("vault:gdpr/" .. id, {bundle})`
               """) { call, ctx in
                try ctx.get("/users/\(segment(try call.id(1)))/export")
            },
            fn("users.effective_permissions", "users.list", """
               hub.users.effective_permissions(user_id, app_id) -> {allowed, user_status, entitlement_status, access_paths, \
               roles, effective_permissions, computed_at}
               """) { call, ctx in
                let (user, app) = (try call.id(1), try call.id(2))
                return try ctx.get("/users/\(segment(user))/apps/\(segment(app))/effective-permissions")
            },
        ]
    }

    var roleManagement: [ScriptFunction] {
        [
            fn("roles.get", "roles.manage", "hub.roles.get(id) -> role {id, name, permissions, seed, assignment_count, …}") { call, ctx in
                try ctx.get("/roles/\(segment(try call.id(1)))")
            },
            fn("roles.create", "roles.manage", writes: true, """
               hub.roles.create({name, permissions = {…}, description?}, opts) -> role (id role_platform_<name>; \
               role_name_taken, unknown_permission, role_escalation_forbidden)
               """) { call, _ in
                var fields = try call.fields(1)
                try Self.checkKnown(call, 1, fields, allowed: Self.roleCreateFields)
                guard let name = try call.field(fields, "name", at: 1, max: HubArgumentLimits.keyName) else {
                    throw call.argumentError(1, "field 'name' (a string such as \"auditor\") is required")
                }
                guard let perms = Self.stringList(fields["permissions"]) else {
                    throw call.argumentError(1, "field 'permissions' (a list of permission keys, may be empty) is required")
                }
                fields["permissions"] = .array(perms.map(ScriptValue.string))
                if fields["scope"] == nil { fields["scope"] = "platform" }
                return try write(call, optionsAt: 2, .post, "/roles", body: try call.body(fields, at: 1), summary: "create role \(name)",
                                 predicted: ["id": .string("role_platform_" + name), "name": .string(name)])
            },
            fn("roles.update", "roles.manage", writes: true,
               "hub.roles.update(id, {permissions?, description?}, opts) -> role (PATCH; If-Match; seed roles: seed_role_immutable)") { call, _ in
                let id = try call.id(1)
                var fields = try call.fields(2)
                guard !fields.isEmpty else { throw call.argumentError(2, "at least one field to change expected") }
                try Self.checkKnown(call, 2, fields, allowed: Self.roleUpdateFields)
                if fields["permissions"] != nil {
                    guard let perms = Self.stringList(fields["permissions"]) else {
                        throw call.argumentError(2, "field 'permissions' must be a list of permission keys")
                    }
                    fields["permissions"] = .array(perms.map(ScriptValue.string))
                }
                var predicted = fields
                predicted["id"] = .string(id)
                return try write(call, optionsAt: 3, .patch, "/roles/\(segment(id))", body: try call.body(fields, at: 2),
                                 summary: "update role \(id): \(fields.keys.sorted().joined(separator: ", "))",
                                 predicted: .object(predicted), stillApplies: { _ in true })
            },
            fn("roles.delete", "roles.manage", writes: true,
               "hub.roles.delete(id, opts) -> true (role_in_use while assigned; seed_role_immutable)") { call, _ in
                let id = try call.id(1)
                return try write(call, optionsAt: 2, .delete, "/roles/\(segment(id))", summary: "delete role \(id)", predicted: .bool(true))
            },
        ]
    }

    var accessChanges: [ScriptFunction] {
        [
            fn("entitlements.update", "entitlements.manage", writes: true, """
               hub.entitlements.update(id, {status?, disabled_reason?, ends_at? (json.null clears), source = "purchase"?, \
               member_scope?, member_overrides?}, opts) -> entitlement (PATCH; If-Match; expired → active needs a future or \
               null ends_at)
               """) { call, _ in
                let id = try call.id(1)
                let fields = try call.fields(2)
                guard !fields.isEmpty else { throw call.argumentError(2, "at least one field to change expected") }
                try Self.checkKnown(call, 2, fields, allowed: Self.entitlementUpdateFields)
                var predicted = fields
                predicted["id"] = .string(id)
                return try write(call, optionsAt: 3, .patch, "/entitlements/\(segment(id))", body: try call.body(fields, at: 2),
                                 summary: "update \(id): \(fields.keys.sorted().joined(separator: ", "))",
                                 predicted: .object(predicted), stillApplies: { fresh in
                                     fields["status"]?.stringValue.map { fresh["status"]?.stringValue != $0 } ?? true
                                 })
            },
            fn("organizations.grant", "entitlements.manage", writes: true, """
               hub.organizations.grant(org_id, {application_id, member_scope = "all_members", "allowlist" or "denylist", \
               member_overrides = {user_id, …}, starts_at?, ends_at?}, opts) -> the org grant (source org_seat; members get seats; \
               409 entitlement_already_exists)
               """) { call, _ in
                let org = try call.id(1)
                let fields = try call.fields(2)
                try Self.checkKnown(call, 2, fields, allowed: Self.orgGrantFields)
                guard let app = try call.field(fields, "application_id", at: 2, max: HubArgumentLimits.id) else {
                    throw call.argumentError(2, "field 'application_id' (a string) is required")
                }
                return try write(call, optionsAt: 3, .post, "/organizations/\(segment(org))/entitlements", body: try call.body(fields, at: 2),
                                 summary: "grant \(app) to the members of \(org) (\(fields["member_scope"]?.stringValue ?? "all_members"))",
                                 predicted: ["organization_id": .string(org), "application_id": .string(app),
                                             "status": "active", "source": "org_seat"],
                                 creates: CreatedID(prefix: "ent"))
            },
            fn("inbox.mark_read", nil, writes: true,
               "hub.inbox.mark_read(notification_id, opts) -> notification (state read; the caller's own inbox, a user session only)") { call, _ in
                let id = try call.id(1)
                return try write(call, optionsAt: 2, .patch, "/users/me/notifications/\(segment(id))", body: ["state": "read"],
                                 summary: "mark \(id) read", predicted: ["id": .string(id), "state": "read"],
                                 stillApplies: { fresh in fresh["state"]?.stringValue != "read" })
            },
        ]
    }
}
