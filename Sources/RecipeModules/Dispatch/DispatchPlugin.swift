import HubClient
import DispatchClient
import Foundation
import JSONKit
import ScriptHost

/// The `dispatch` module: notifications through the Dispatch relay. Every send is a write
/// of the run — keyed, journalled, planned, applied and counted against the write limit
/// like a `hub` write — and needs `dispatch.send` in the manifest's `needs`. The reference
/// page (docs/modules.md) is generated from these declarations; docs/dispatch.md explains
/// them.
public enum DispatchPlugin {
    /// The module for one run; `target` is the profile's Dispatch (nil: none is set up,
    /// and `dispatch.send` says so); `targets` the named ones the configuration defines
    /// for the recipe's declared `targets` (`dispatch.connect(NAME)`).
    public static func make(_ environment: HubRunEnvironment, target: DispatchTarget?,
                            targets: [String: DispatchTarget] = [:]) -> Plugin {
        plugin(DispatchSession(environment: environment, target: target, targets: targets))
    }

    /// The declarations alone, for the module reference (`hubscript docs modules`).
    public static var documented: Plugin { plugin(nil) }

    private static func plugin(_ session: DispatchSession?) -> Plugin {
        @Sendable func live() throws -> DispatchSession {
            guard let session else { throw ScriptMessageError("the dispatch module is not connected to a run here") }
            return session
        }
        return Plugin(
            module: "dispatch",
            summary: """
            Notifications to an admin's phone through Dispatch (docs/dispatch.md). `dispatch.send` goes to the profile's \
            Dispatch (`dispatch_url`, `dispatch_token_ref`; the built-in sandbox profile has one in process); \
            `dispatch.connect("ops")` to a target the configuration defines (`dispatch_targets`: its URL and token) and the \
            manifest declares (`targets = { "ops" }`); a recipe never gives a URL or a token. Each send is a \
            write: derived idempotency key (or `key = …`), journal, plan and apply, `limits.writes`. Title 1–100 and body \
            1–1000 characters, checked as the server checks them. Needs `dispatch.send` in `needs`. Errors are tables with \
            `code` (`unauthorized`, `invalid_title`, `invalid_body`, `transport_error`, …), `message`, `status`, `hint`.
            """,
            functions: [
                ScriptFunction("send", capability: "dispatch.send", writes: true,
                               summary: "dispatch.send{title, body, key?} -> {id, accepted_devices, replayed}") { call in
                    .value(try live().send(call, argument: 1, via: nil))
                },
                ScriptFunction("connect", capability: "dispatch.send",
                               summary: "dispatch.connect(TARGET) or dispatch.connect{target = TARGET} -> connection to a configured Dispatch target the manifest declares; `conn:send{title, body, key?}` sends through it") { call in
                    .value(try live().connect(call))
                },
                ScriptFunction("_send_via", capability: "dispatch.send", writes: true,
                               summary: "internal: conn:send of a dispatch.connect connection") { call in
                    .value(try live().send(call, argument: 2, via: Int(try call.integer(1))))
                },
            ],
            luaWrapper: DispatchPlugin.lua)
    }

    /// `dispatch.send` is the binding itself (errors point at the recipe's line);
    /// `dispatch.connect` returns a table whose `send` method closes over the
    /// connection's id, so a recipe can neither see nor forge it.
    static let lua = """
        local raw = ...
        local connect, send_via = raw.connect, raw._send_via
        local pcall, error, setmetatable, type = pcall, error, setmetatable, type
        local dispatch = { send = raw.send }
        function dispatch.connect(args)
          local ok, conn = pcall(connect, args)
          if not ok then error(conn, 2) end
          local id, url, target = conn.id, conn.url, conn.target
          local object = {}
          function object.send(self, fields)
            if self ~= object then error("use conn:send{ … } (a colon, not a dot)", 2) end
            local sent, result = pcall(send_via, id, fields)
            if not sent then error(result, 2) end
            return result
          end
          return setmetatable(object, {
            __name = "dispatch.connection", __metatable = false,
            __tostring = function() return "<dispatch connection " .. target .. ">" end,
            __index = function(_, k) if k == "url" then return url elseif k == "target" then return target end end,
            __newindex = function() error("a dispatch connection is read-only", 2) end,
          })
        end
        return dispatch
        """
}

/// What the `dispatch` module of one run holds: the default client (made by the first
/// send) and the connections `dispatch.connect` opened, one per target. Used from the
/// run's thread.
final class DispatchSession: @unchecked Sendable {
    let environment: HubRunEnvironment
    let target: DispatchTarget?
    /// The configured targets the manifest declares, by name.
    let targets: [String: DispatchTarget]
    private var profileClient: DispatchClient?
    private var connections: [(target: String, client: DispatchClient)] = []

    init(environment: HubRunEnvironment, target: DispatchTarget?, targets: [String: DispatchTarget]) {
        self.environment = environment
        self.target = target
        self.targets = targets
    }

    /// The write's path in the journal and plans: `/dispatch/v1/notifications` for the
    /// profile's Dispatch, `/dispatch/targets/NAME/v1/notifications` for a target's.
    static func journalPath(target: String?) -> String {
        target.map { "/dispatch/targets/\($0)/v1/notifications" } ?? "/dispatch/v1/notifications"
    }

    func send(_ call: BindingCall, argument n: Int, via id: Int?) throws -> ScriptValue {
        let args = try DispatchArguments(call, n, name: id == nil ? "dispatch.send" : "conn:send", allowed: ["title", "body", "key"])
        let title = try args.string("title")
        let body = try args.string("body")
        let key = try args.key()
        let notification: DispatchNotification
        do { notification = try DispatchNotification(title: title, body: body) } catch let error as DispatchError {
            throw error.hubError
        }
        let connection = try id.map(connection)
        let client = try connection?.client ?? defaultClient()
        let intent = WriteIntent(
            method: "POST", path: Self.journalPath(target: connection?.target),
            body: CanonicalJSON(.object(["title": .string(notification.title), "body": .string(notification.body)])), explicitKey: key,
            summary: "notify \"\(DispatchArguments.shortened(notification.title))\"" + (connection.map { " via \($0.target)" } ?? ""),
            predicted: ["id": "planned", "accepted_devices": .integer(0), "replayed": false])
        let result = try environment.context.performWrite(intent) { key in
            do {
                let receipt = try client.send(notification, idempotencyKey: key)
                return ["id": .string(receipt.id), "accepted_devices": .integer(Int64(receipt.acceptedDevices)),
                        "replayed": .bool(receipt.replayed)]
            } catch let error as DispatchError {
                throw error.isDefinite ? RejectedWrite(error: error.hubError) : error.hubError
            }
        }
        guard result.replayed, case .object(var value) = result.value else { return result.value }
        value["replayed"] = .bool(true)   // answered from the journal: nothing was sent now
        return .object(value)
    }

    /// The profile's client, made (and its token read) on first use.
    private func defaultClient() throws -> DispatchClient {
        if let profileClient { return profileClient }
        guard let target else {
            throw ScriptStructuredError(code: "dispatch_not_configured", message:
                "this run has no Dispatch: use a profile with dispatch_url and dispatch_token_ref, or a configured target: dispatch.connect(\"NAME\")")
        }
        let client = try target.client(secrets: environment.secrets, masking: environment.context.writes.masking)
        profileClient = client
        return client
    }

    private func connection(_ id: Int) throws -> (target: String, client: DispatchClient) {
        guard connections.indices.contains(id - 1) else { throw ScriptMessageError("not a dispatch connection") }
        return connections[id - 1]
    }

    /// `dispatch.connect("ops")` / `dispatch.connect{target = "ops"}`: a connection to a
    /// target the configuration defines and the manifest declares. The configuration
    /// binds the URL and the token; a recipe that gives either is refused, so a secret
    /// only ever goes where the configuration sends it. The token is read now (a missing
    /// vault or entry fails here, before any send is journalled).
    func connect(_ call: BindingCall) throws -> ScriptValue {
        let name = try Self.targetName(call)
        let declared = environment.prepared.manifest.targets
        guard declared.contains(name) else {
            throw ScriptStructuredError(code: "target_not_declared", message:
                "dispatch.connect: the target '\(name)' is not declared; add it to the manifest's targets = { \"\(name)\" } (a reviewer reads there every destination a recipe can reach)",
                fields: ["target": .string(name)])
        }
        if let open = connections.firstIndex(where: { $0.target == name }) { return connectionValue(open + 1) }
        guard let target = targets[name] else {
            throw ScriptStructuredError(code: "dispatch_not_configured", message:
                "the configuration defines no Dispatch target '\(name)' for this run", fields: ["target": .string(name)])
        }
        let client: DispatchClient
        do { client = try target.client(secrets: environment.secrets, masking: environment.context.writes.masking) } catch let error as DispatchError { throw error.hubError }
        connections.append((name, client))
        return connectionValue(connections.count)
    }

    private func connectionValue(_ id: Int) -> ScriptValue {
        let (name, client) = connections[id - 1]
        return ["id": .integer(Int64(id)), "url": .string(client.baseURL.absoluteString), "target": .string(name)]
    }

    /// The target a `dispatch.connect` call names, or the error that says how to name one.
    static func targetName(_ call: BindingCall) throws -> String {
        let usage = "dispatch.connect(\"NAME\") names a Dispatch target of the configuration (dispatch_targets = { NAME = { url = …, token_ref = … } }) declared in the manifest's targets"
        let shown = "bad argument #1 to 'dispatch.connect'"
        let name: String
        switch try call.value(1) {
        case .string(let s): name = s
        case .object(let fields):
            if fields["url"] != nil || fields["token"] != nil {
                throw ScriptMessageError("\(shown) (a recipe gives no URL or token: a secret goes only where the configuration sends it; \(usage))")
            }
            if let unknown = fields.keys.sorted().first(where: { $0 != "target" }) {
                throw ScriptMessageError("\(shown) (unknown field '\(DispatchArguments.shortened(unknown))' (fields: target))")
            }
            guard let s = fields["target"]?.stringValue else { throw ScriptMessageError("\(shown) (target is required: \(usage))") }
            name = s
        default:
            throw ScriptMessageError("\(shown) (a target name expected, got \(call.typeName(1)): \(usage))")
        }
        guard RecipeManifest.isTargetName(name) else {
            throw ScriptMessageError("\(shown) ('\(DispatchArguments.shortened(name))' is not a target name: \(usage))")
        }
        return name
    }
}

extension DispatchError {
    /// The error as a recipe and the `--json` stream see it: a table with `code`,
    /// `message`, `status`, `hint` and, for a validation error, `details.field`.
    var hubError: HubError {
        HubError(code: code, message: message, status: status, details: field.map { .object(["field": .string($0)]) }, hint: hint)
    }
}

/// The named-fields table a `dispatch` binding takes, read with errors that name the
/// function as the recipe wrote it: `bad argument #1 to 'dispatch.send' (body is
/// required)`, `bad argument #1 to 'conn:send' (…)`.
struct DispatchArguments {
    let fields: [String: ScriptValue]
    private let shown: String

    /// Argument `n` of `call`, which the recipe knows as argument #1 of `name`.
    init(_ call: BindingCall, _ n: Int, name: String, allowed: [String]) throws {
        shown = "bad argument #1 to '\(name)'"
        switch try call.value(n) {
        case .object(let f): fields = f
        case .array(let a) where a.isEmpty: fields = [:]
        default: throw ScriptMessageError("\(shown) (table expected, got \(call.typeName(n)))")
        }
        if let unknown = fields.keys.sorted().first(where: { !allowed.contains($0) }) {
            throw error("unknown field '\(Self.shortened(unknown))' (fields: \(allowed.joined(separator: ", ")))")
        }
    }

    func error(_ detail: String) -> ScriptMessageError { ScriptMessageError("\(shown) (\(detail))") }

    func string(_ name: String) throws -> String {
        guard let value = fields[name] else { throw error("\(name) is required") }
        guard let s = value.stringValue else { throw error("\(name) must be a string, got \(value.luaTypeName)") }
        return s
    }

    func key() throws -> String? {
        guard let value = fields["key"] else { return nil }
        guard let s = value.stringValue, !s.isEmpty else { throw error("key must be a non-empty string") }
        return s
    }

    /// At most 40 characters of `text`, for messages and summaries.
    static func shortened(_ text: String) -> String { text.count > 40 ? String(text.prefix(39)) + "…" : text }
}
