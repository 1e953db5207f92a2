import HubClient
import DispatchClient
import Foundation
import ScriptHost

/// The `dispatch` module: notifications through the Dispatch relay (seed 003 §5). Every
/// send is a write of the run — keyed, journalled, planned, applied and counted against
/// the write limit like a `hub` write — and needs `dispatch.send` in the manifest's
/// `needs`. The reference page (docs/modules.md) is generated from these declarations;
/// docs/dispatch.md explains them.
public enum DispatchPlugin {
    /// The module for one run; `target` is the profile's Dispatch (nil: none is set up,
    /// and `dispatch.send` says so).
    public static func make(_ environment: HubRunEnvironment, target: DispatchTarget?) -> Plugin {
        plugin(DispatchSession(environment: environment, target: target))
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
            Dispatch (`dispatch_url`, `dispatch_token_ref`; the built-in sandbox profile has one in process). Each send is a \
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
                               summary: "dispatch.connect{url, token = vault.secret(name)} -> connection; `conn:send{title, body, key?}` sends through it") { call in
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
          local id, url = conn.id, conn.url
          local object = {}
          function object.send(self, fields)
            if self ~= object then error("use conn:send{ … } (a colon, not a dot)", 2) end
            local sent, result = pcall(send_via, id, fields)
            if not sent then error(result, 2) end
            return result
          end
          return setmetatable(object, {
            __name = "dispatch.connection", __metatable = false,
            __tostring = function() return "<dispatch connection " .. url .. ">" end,
            __index = function(_, k) if k == "url" then return url end end,
            __newindex = function() error("a dispatch connection is read-only", 2) end,
          })
        end
        return dispatch
        """
}

/// What the `dispatch` module of one run holds: the default client (made by the first
/// send) and the connections `dispatch.connect` opened. Used from the run's thread.
final class DispatchSession: @unchecked Sendable {
    let environment: HubRunEnvironment
    let target: DispatchTarget?
    private var profileClient: DispatchClient?
    private var connections: [DispatchClient] = []
    /// Connections one run may open.
    static let maxConnections = 32

    init(environment: HubRunEnvironment, target: DispatchTarget?) {
        self.environment = environment
        self.target = target
    }

    /// The write's path in the journal and plans: `/dispatch/v1/notifications` for the
    /// profile's Dispatch, `/dispatch/HOST[:PORT]/v1/notifications` for a connection.
    static func journalPath(via connection: DispatchClient?) -> String {
        guard let url = connection?.baseURL, let host = url.host else { return "/dispatch/v1/notifications" }
        let shown = host.contains(":") ? "[\(host)]" : host
        return "/dispatch/\(shown)\(url.port.map { ":\($0)" } ?? "")/v1/notifications"
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
        let connection = try id.map(connection) ?? nil
        let client = try connection ?? defaultClient()
        let intent = WriteIntent(
            method: "POST", path: Self.journalPath(via: connection),
            body: .object(["title": .string(notification.title), "body": .string(notification.body)]), explicitKey: key,
            summary: "notify \"\(DispatchArguments.shortened(notification.title))\"" + (connection?.baseURL.host.map { " via \($0)" } ?? ""),
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
                "this run has no Dispatch: use a profile with dispatch_url and dispatch_token_ref, or dispatch.connect{url = …, token = vault.secret(…)}")
        }
        let client = try target.client(secrets: environment.secrets)
        profileClient = client
        return client
    }

    private func connection(_ id: Int) throws -> DispatchClient {
        guard connections.indices.contains(id - 1) else { throw ScriptMessageError("not a dispatch connection") }
        return connections[id - 1]
    }

    /// `dispatch.connect{url, token}`: checks the URL, reads the token behind the secret
    /// handle now (so a missing vault or entry fails here, before any send is journalled).
    func connect(_ call: BindingCall) throws -> ScriptValue {
        let args = try DispatchArguments(call, 1, name: "dispatch.connect", allowed: ["url", "token"])
        let text = try args.string("url")
        guard let url = URL(string: text), url.host != nil else { throw args.error("url is not a URL: \(DispatchArguments.shortened(text))") }
        do { try DispatchClient.checkURL(url) } catch let error as DispatchError { throw error.hubError }
        guard case .handle(let handle)? = args.fields["token"], let name = handle.secretName else {
            throw args.error(args.fields["token"] == nil
                ? "token is required: token = vault.secret(\"NAME\")"
                : "token must be a secret handle: token = vault.secret(\"NAME\"); a token written in a recipe or a param would be readable by anyone who can read those")
        }
        guard connections.count < Self.maxConnections else {
            throw args.error("a run opens at most \(Self.maxConnections) dispatch connections")
        }
        guard let secrets = environment.secrets else {
            throw ScriptStructuredError(code: "vault_not_open", message:
                "no vault is open: dispatch.connect needs the vault entry '\(name)', which cannot be read without it")
        }
        let token = try secrets.value(of: name)
        // The network with the profile's CAs (`TLSTrust`), or what the caller put in its place.
        let transport = try target?.connectionTransport
            ?? LiveDispatchTransport(trust: target?.trust() ?? TLSTrust.resolve(profile: nil, caFile: nil))
        let client: DispatchClient
        do {
            client = try DispatchClient(baseURL: url, token: token, tokenSource: "the vault entry '\(name)'", transport: transport)
        } catch let error as DispatchError { throw error.hubError }
        connections.append(client)
        return ["id": .integer(Int64(connections.count)), "url": .string(url.absoluteString)]
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
