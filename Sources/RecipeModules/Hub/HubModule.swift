import Foundation
import HubClient
import ScriptHost

/// The `hub` module: Lua bindings over the Hub client. Each binding declares the
/// permission it needs and whether it writes; the host refuses a binding whose
/// permission the manifest did not declare (see `HubGate`). Reads of lists return lazy
/// iterators (the Lua wrapper pages on demand); every write goes through the run's
/// `WriteCoordinator`. The reference page (docs/modules.md) is generated from these
/// declarations.
public enum HubModule {
    public static func make(_ context: HubRunContext) -> Plugin {
        return Plugin(
            module: "hub",
            summary: """
            The Substratal Hub (docs/hub-api.md; objects: docs/hub-objects.md). Lists are lazy: `for u in hub.users.list{status = "active"} do … end`, \
            or `:collect()`, `:count()`, `:first()`. Errors are tables with `code`, `message`, `status`, `request_id`, \
            `details`, `hint` (`local ok, err = pcall(…)`; `err.code`). Every write takes a last options table; \
            `{ key = … }` sets the idempotency key (default: derived from the run, the request and its occurrence). \
            Also `hub.sessions.revoke_all(user_id)`: revokes every live session, returns how many. A binding whose \
            permission the manifest's `needs` does not list fails with `permission_not_declared`. \
            Gated features (`hub.webhooks.*`: webhooks, `hub.organizations.*`: organizations, `hub.inbox.*`: \
            notifications, `hub.notifications.send`: send_notifications): when the Hub answers `501 not_implemented` \
            (or 404 on a list or create), hubscript warns once and turns the feature off for the run; from then on \
            (the call that found out included) its list bindings return an empty list and the others return nil, \
            without calling the Hub. `hub.available(feature)` says whether a feature is still on.
            """,
            makingFunctions: {
                let b = Bindings(context: context)
                return b.users + b.userLifecycle + b.roles + b.roleManagement + b.entitlements + b.accessChanges + b.sessions
                    + b.apiKeys + b.apiKeyManagement + b.organizations + b.audit + b.webhooks + b.misc
            },
            luaWrapper: HubModuleLua.source)
    }
}

/// The declarations, grouped by resource. `fn` wraps a body so a 403 refreshes the
/// run's Capabilities and reads as a clear error, and so a binding whose feature the
/// Hub does not offer (`HubFeatures`) returns its "unavailable" result.
package struct Bindings {
    let context: HubRunContext

    func fn(_ name: String, _ capability: String?, writes: Bool = false, _ summary: String,
            _ body: @escaping @Sendable (BindingCall, HubCall) throws -> ScriptValue) -> ScriptFunction {
        let context = self.context
        let feature = HubFeatures.feature(of: name)
        let isList = HubModuleLua.listBindings.contains(name)
        @Sendable func unavailable() -> ScriptValue { isList ? .integer(Int64(context.emptyList())) : .nilValue }
        return ScriptFunction(name, capability: capability, writes: writes, summary: summary) { (call: BindingCall) throws -> ScriptResult in
            // A write of a feature already off is not even planned.
            if writes, let feature, !context.client.isFeatureEnabled(feature) { return .value(unavailable()) }
            do {
                return .value(try body(call, HubCall(run: context, feature: feature)))
            } catch let error as RejectedWrite where error.error.code == HubError.Code.featureDisabled {
                return .value(unavailable())
            } catch let error as HubError where error.code == HubError.Code.featureDisabled {
                return .value(unavailable())
            } catch let error as RejectedWrite where error.error.code == HubError.Code.forbidden {
                throw HubGate.forbidden(error.error, binding: "hub.\(name)", context: context)
            } catch let error as HubError where error.code == HubError.Code.forbidden {
                throw HubGate.forbidden(error, binding: "hub.\(name)", context: context)
            }
        }
    }

    /// A list binding: returns a handle the Lua wrapper turns into an iterator.
    func list(_ name: String, _ capability: String?, _ summary: String,
              _ target: @escaping @Sendable (BindingCall) throws -> (String, [(name: String, value: String)])) -> ScriptFunction {
        fn(name, capability, summary) { call, ctx in
            let (path, query) = try target(call)
            return .integer(Int64(ctx.openList("hub.\(name)", path, query)))
        }
    }

    /// A write of the binding `call` runs: sent under that binding's feature flag.
    func write(_ call: BindingCall, optionsAt n: Int, _ method: HubMethod, _ path: String, body: HubJSON? = nil,
               summary: String, predicted: ScriptValue, creates: CreatedID? = nil,
               stillApplies: (@Sendable (HubJSON) -> Bool)? = nil) throws -> ScriptValue {
        let feature = HubFeatures.feature(ofFunction: call.functionName)
        return try context.perform(HubWrite(method: method, path: path, body: body, explicitKey: try call.key(n),
                                     summary: summary, predicted: predicted, creates: creates, stillApplies: stillApplies),
                                   feature: feature)
    }

    var misc: [ScriptFunction] {
        [
            fn("_next_page", nil, "internal: the next page of a list handle") { call, ctx in
                try ctx.nextPage(Int(try call.integer(1)))
            },
            fn("_close_list", nil, "internal: frees a list handle the recipe let go of") { call, ctx in
                ctx.closeList(Int(try call.integer(1)))
                return .nilValue
            },
            fn("available", nil, "hub.available(feature) -> false once the Hub turned the feature off this run (501), else true") { call, ctx in
                .bool(ctx.client.isFeatureEnabled(try call.text(1, "feature", max: 64)))
            },
            fn("capabilities", nil, "hub.capabilities() -> { permissions = {…}, permissions_known = bool, source = …, user_id = … }") { _, ctx in
                let caps = try ctx.client.capabilities()
                // A key whose permissions are not known (gate = "hub" assumes them all to
                // let the Hub decide) lists none: a recipe never branches on an assumption.
                let known = !caps.permissionsUnknown
                var out: [String: ScriptValue] = [
                    "permissions": .array(known ? caps.permissions.sorted().map { .string($0) } : []),
                    "permissions_known": .bool(known),
                    "source": .string(caps.source.rawValue),
                ]
                if let id = caps.userID { out["user_id"] = .string(id) }
                return .object(out)
            },
            fn("permissions.list", nil, "hub.permissions.list() -> { {key, scope, description}, … } (platform scope)") { _, ctx in
                try ctx.get("/permissions", [("scope", "platform")])["data"]
            },
            fn("applications.list", nil, "hub.applications.list() -> { application, … } (the catalog)") { _, ctx in
                try ctx.get("/applications")["data"]
            },
            fn("notifications.send", "notifications.send", writes: true,
               "hub.notifications.send(app_id, {user_id, title, body, category, action_url?}, opts) -> {id}") { call, _ in
                let app = try call.id(1)
                let fields = try call.fields(2)
                for required in ["user_id", "title", "body", "category"] where fields[required]?.stringValue == nil {
                    throw call.argumentError(2, "field '\(required)' (a string) is required")
                }
                _ = try call.field(fields, "user_id", at: 2, max: HubArgumentLimits.id)
                return try write(call, optionsAt: 3, .post, "/applications/\(segment(app))/notifications",
                                 body: try call.body(fields, at: 2), summary: "notify \(fields["user_id"]!.stringValue!) via \(app)",
                                 predicted: [:], creates: CreatedID(prefix: "ntf"))
            },
        ]
    }
}
