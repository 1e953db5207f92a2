import SQLiteKit
import Foundation
import HTTPKit
import Synchronization

/// Configuration of a `DispatchSandbox`.
public struct DispatchOptions: Sendable {
    /// Machine bearer token → machine name (the name shown on the phone).
    public var machineTokens: [String: String]
    /// The secret accepted only by the device routes.
    public var enrollmentToken: String
    /// Devices registered at start (`development`), so sends reach someone.
    public var initialDevices: [String]

    public static let sandboxMachineToken = "dsp_test_machine_sandbox"
    public static let sandboxMachineName = "sandbox-ci"
    public static let sandboxEnrollmentToken = "dsp_test_enrollment_sandbox"
    public static let sandboxDeviceToken = String(repeating: "ab", count: 32)

    public init(machineTokens: [String: String] = [sandboxMachineToken: sandboxMachineName],
                enrollmentToken: String = sandboxEnrollmentToken,
                initialDevices: [String] = [sandboxDeviceToken]) {
        self.machineTokens = machineTokens
        self.enrollmentToken = enrollmentToken
        self.initialDevices = initialDevices
    }
}

/// A notification the sandbox accepted (log mode: recorded, never pushed).
public struct SentNotification: Sendable, Equatable {
    public let id: String
    /// From the token record, never from the request.
    public let machine: String
    public let title: String
    public let body: String
    public let acceptedDevices: Int
    public let idempotencyKey: String?
}

/// A registered app installation.
public struct RegisteredDevice: Sendable, Equatable {
    public let deviceToken: String
    public let environment: String
    public let active: Bool
}

/// The Dispatch relay (docs/dispatch.md) in log mode, state in memory. Thread-safe.
///
/// - `GET /health` → 200 `{"status":"ok"}`.
/// - `POST /v1/devices` (enrollment bearer) `{deviceToken (64–200 hex chars, even length),
///   environment: development|production}` → 201 new / 200 refresh.
/// - `DELETE /v1/devices/{deviceToken}` (enrollment bearer) → 204 (also when unknown).
/// - `POST /v1/notifications` (machine bearer) `{title 1–100, body 1–1000 characters}` →
///   202 `{"id","acceptedDevices"}`. `Idempotency-Key` (per machine): same key and body →
///   the same response with `Idempotent-Replayed: true` and nothing re-sent; other body →
///   409 `idempotency_key_reused`.
/// Errors: `{"error":{"code","message"}}`; 401 `unauthorized` for a missing or unknown
/// token, 400 `invalid_json` / `invalid_title` / `invalid_body` / `invalid_environment` /
/// `invalid_device_token`, 404 `not_found`.
public final class DispatchSandbox: Sendable {
    private let options: DispatchOptions
    /// What the relay holds: sends, devices (and the order they came in), and the
    /// answers kept for idempotent replays.
    private struct Relayed {
        var sent: [SentNotification] = []
        var registry: [String: RegisteredDevice] = [:]
        var registryOrder: [String] = []
        var replays: [String: (fingerprint: Data, response: HTTPResponseMessage)] = [:]

        mutating func store(_ d: RegisteredDevice) {
            if registry[d.deviceToken] == nil { registryOrder.append(d.deviceToken) }
            registry[d.deviceToken] = d
        }
    }
    private let state: Mutex<Relayed>

    public init(options: DispatchOptions = DispatchOptions()) {
        self.options = options
        var initial = Relayed()
        for t in options.initialDevices { initial.store(RegisteredDevice(deviceToken: t, environment: "development", active: true)) }
        state = Mutex(initial)
    }

    /// Every accepted send, oldest first (replays are not repeated).
    public var sentNotifications: [SentNotification] { state.withLock { $0.sent } }
    /// Every device ever registered, in registration order.
    public var devices: [RegisteredDevice] { state.withLock { state in state.registryOrder.compactMap { state.registry[$0] } } }

    public func handle(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        state.withLock { route(request, &$0) }
    }

    private func route(_ r: HTTPRequestMessage, _ state: inout Relayed) -> HTTPResponseMessage {
        let parts = r.path.split(separator: "/").map(String.init)
        switch (r.method, parts.count) {
        case ("GET", 1) where parts == ["health"]: return Self.json(200, .object([("status", .string("ok"))]))
        case ("POST", 2) where parts == ["v1", "devices"]: return register(r, &state)
        case ("DELETE", 3) where parts[0] == "v1" && parts[1] == "devices": return unregister(r, token: parts[2], &state)
        case ("POST", 2) where parts == ["v1", "notifications"]: return notify(r, &state)
        default: return Self.error(404, "not_found", "No route \(r.method) \(r.path).")
        }
    }

    private static func json(_ status: Int, _ body: JSON, extra: [(String, String)] = []) -> HTTPResponseMessage {
        var h = HTTPHeaders([("Content-Type", "application/json")])
        for (n, v) in extra { h.add(n, v) }
        return HTTPResponseMessage(status: status, headers: h, body: body.data)
    }

    private static func error(_ status: Int, _ code: String, _ message: String) -> HTTPResponseMessage {
        json(status, .object([("error", .object([("code", .string(code)), ("message", .string(message))]))]))
    }

    /// Constant-time comparison of two secrets.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        var diff = UInt8(x.count == y.count ? 0 : 1)
        for i in 0..<max(x.count, y.count) { diff |= (i < x.count ? x[i] : 0) ^ (i < y.count ? y[i] : 0) }
        return diff == 0
    }

    private static func bearer(_ r: HTTPRequestMessage) -> String? {
        guard let h = r.headers["Authorization"], h.hasPrefix("Bearer ") else { return nil }
        return String(h.dropFirst(7))
    }

    private func enrolled(_ r: HTTPRequestMessage) -> Bool {
        Self.bearer(r).map { Self.same($0, options.enrollmentToken) } ?? false
    }

    private static func validDeviceToken(_ t: String) -> Bool {
        (64...200).contains(t.count) && t.count % 2 == 0 && t.allSatisfy { $0.isHexDigit && $0.isASCII }
    }

    private func register(_ r: HTTPRequestMessage, _ state: inout Relayed) -> HTTPResponseMessage {
        guard enrolled(r) else { return Self.error(401, "unauthorized", "Send Authorization: Bearer <enrollment token>.") }
        guard let b = try? JSONParser.parse(r.body), case .object = b else { return Self.error(400, "invalid_json", "The body must be a JSON object.") }
        guard let token = b["deviceToken"]?.stringValue, Self.validDeviceToken(token) else {
            return Self.error(400, "invalid_device_token", "deviceToken must be 64–200 hexadecimal characters.")
        }
        guard let env = b["environment"]?.stringValue, env == "development" || env == "production" else {
            return Self.error(400, "invalid_environment", "environment must be development or production.")
        }
        let isNew = state.registry[token]?.active != true
        state.store(RegisteredDevice(deviceToken: token, environment: env, active: true))
        return Self.json(isNew ? 201 : 200, .object([("deviceToken", .string(token)), ("environment", .string(env)), ("active", .bool(true))]))
    }

    private func unregister(_ r: HTTPRequestMessage, token: String, _ state: inout Relayed) -> HTTPResponseMessage {
        guard enrolled(r) else { return Self.error(401, "unauthorized", "Send Authorization: Bearer <enrollment token>.") }
        guard Self.validDeviceToken(token) else {
            return Self.error(400, "invalid_device_token", "deviceToken must be 64–200 hexadecimal characters.")
        }
        if let d = state.registry[token] { state.store(RegisteredDevice(deviceToken: token, environment: d.environment, active: false)) }
        return HTTPResponseMessage(status: 204)
    }

    private func notify(_ r: HTTPRequestMessage, _ state: inout Relayed) -> HTTPResponseMessage {
        guard let token = Self.bearer(r),
              let machine = options.machineTokens.first(where: { Self.same($0.key, token) })?.value else {
            return Self.error(401, "unauthorized", "Unknown or missing machine token.")
        }
        let key = r.headers["Idempotency-Key"]
        let scoped = key.map { machine + "\u{0}" + $0 }
        if let scoped, let prior = state.replays[scoped] {
            guard prior.fingerprint == r.body else {
                return Self.error(409, "idempotency_key_reused", "This Idempotency-Key was used with a different body.")
            }
            var replay = prior.response
            replay.headers.add("Idempotent-Replayed", "true")
            return replay
        }
        guard let b = try? JSONParser.parse(r.body), case .object = b else { return Self.error(400, "invalid_json", "The body must be a JSON object.") }
        guard let title = b["title"]?.stringValue, (1...100).contains(title.count) else {
            return Self.error(400, "invalid_title", "title must be 1–100 characters.")
        }
        guard let text = b["body"]?.stringValue, (1...1000).contains(text.count) else {
            return Self.error(400, "invalid_body", "body must be 1–1000 characters.")
        }
        let id = UUID().uuidString
        let count = state.registry.values.filter(\.active).count
        state.sent.append(SentNotification(id: id, machine: machine, title: title, body: text, acceptedDevices: count, idempotencyKey: key))
        let response = Self.json(202, .object([("id", .string(id)), ("acceptedDevices", .int(count))]))
        if let scoped { state.replays[scoped] = (r.body, response) }
        return response
    }
}
