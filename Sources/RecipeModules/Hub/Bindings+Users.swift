import Foundation
import HubClient
import ScriptHost

extension Bindings {
    static let userFilters = ["status", "email", "q", "organization_id", "created_after", "created_before"]

    var users: [ScriptFunction] {
        [
            fn("users.get", "users.list", "hub.users.get(id_or_email) -> user (an email is looked up exactly)") { call, ctx in
                let (who, isEmail) = try call.idOrEmail(1)
                guard isEmail else { return try ctx.get("/users/\(segment(who))") }
                guard case .array(let found) = try ctx.get("/users", [("email", who)])["data"], let user = found.first else {
                    throw HubError(code: HubError.Code.notFound, message: "No user has the email \(who)", status: 404)
                }
                return user
            },
            list("users.list", "users.list", "hub.users.list{status, email, q, organization_id, created_after, created_before} -> iterator") { call in
                ("/users", try call.query(1, allowed: Self.userFilters))
            },
            fn("users.suspend", "users.manage", writes: true, "hub.users.suspend(id, {reason?, key?}) -> user (revokes every session)") { call, _ in
                let id = try call.id(1)
                let reason = try call.field(try call.fields(2), "reason", at: 2, max: HubArgumentLimits.reason)
                    ?? "suspended by hubscript"
                return try write(call, optionsAt: 2, .post, "/users/\(segment(id))/suspend", body: ["reason": .string(reason)],
                                 summary: "suspend \(id)", predicted: ["id": .string(id), "status": "suspended"])
            },
            fn("users.reactivate", "users.manage", writes: true, "hub.users.reactivate(id, opts) -> user") { call, _ in
                let id = try call.id(1)
                return try write(call, optionsAt: 2, .post, "/users/\(segment(id))/reactivate", body: [:],
                                 summary: "reactivate \(id)", predicted: ["id": .string(id), "status": "active"])
            },
            fn("users.update", "users.manage", writes: true, "hub.users.update(id, {field = value, …}, opts) -> user (PATCH; If-Match)") { call, _ in
                let id = try call.id(1)
                let fields = try call.fields(2)
                guard !fields.isEmpty else { throw call.argumentError(2, "at least one field to change expected") }
                var predicted = fields
                predicted["id"] = .string(id)
                return try write(call, optionsAt: 3, .patch, "/users/\(segment(id))", body: try call.body(fields, at: 2),
                                 summary: "update \(id): \(fields.keys.sorted().joined(separator: ", "))",
                                 predicted: .object(predicted), stillApplies: { _ in true })
            },
            list("users.roles", "users.list", "hub.users.roles(id) -> iterator of {user_id, role_id, assigned_at, assigned_by, implicit}") { call in
                ("/users/\(segment(try call.id(1)))/roles", [])
            },
        ]
    }

    var roles: [ScriptFunction] {
        [
            fn("roles.list", "roles.manage", "hub.roles.list() -> { role with permissions, … } (platform roles)") { _, ctx in
                try ctx.get("/roles", [("scope", "platform")])["data"]
            },
            fn("roles.assign", "roles.manage", writes: true, "hub.roles.assign(user_id, role_id, opts) -> assignment") { call, _ in
                let (user, role) = (try call.id(1), try call.id(2))
                return try write(call, optionsAt: 3, .post, "/users/\(segment(user))/roles/\(segment(role))", body: [:],
                                 summary: "assign \(role) to \(user)", predicted: ["user_id": .string(user), "role_id": .string(role)])
            },
            fn("roles.remove", "roles.manage", writes: true, "hub.roles.remove(user_id, role_id, opts) -> true (also when not held)") { call, _ in
                let (user, role) = (try call.id(1), try call.id(2))
                return try write(call, optionsAt: 3, .delete, "/users/\(segment(user))/roles/\(segment(role))",
                                 summary: "remove \(role) from \(user)", predicted: .bool(true))
            },
        ]
    }
}
