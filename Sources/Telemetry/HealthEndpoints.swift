import Foundation
import HTTPKit

/// One condition `/readyz` requires: `check` returns nil when it holds, otherwise the
/// reason, in one line (`the journal did not answer within 2 s`).
public struct ReadinessCheck: Sendable {
    public let name: String
    public let check: @Sendable () -> String?

    public init(_ name: String, _ check: @escaping @Sendable () -> String?) {
        self.name = name
        self.check = check
    }
}

/// The three operator endpoints a long-running hubscript process serves beside its
/// own paths (`listen`, `jobs serve --http`, the console):
///
/// - `GET /healthz`: `200 ok` while the process answers at all (a liveness probe);
/// - `GET /readyz`: `200 ready` when every readiness check holds, else `503` and
///   `not ready: REASON` (the first failing check's reason; a readiness probe, and what
///   a load balancer reads);
/// - `GET /metrics`: the registry in the Prometheus text format (version 0.0.4).
///
/// `respond(to:)` answers these three paths and returns nil for any other, so the
/// caller's own handler takes it. Another method on them is `405` with `Allow: GET`.
/// Answers are `Cache-Control: no-store`; none carries anything but counts and the
/// failing check's reason.
public struct HealthEndpoints: Sendable {
    public static let paths: Set<String> = ["/healthz", "/readyz", "/metrics"]

    public let registry: MetricsRegistry
    public let readiness: [ReadinessCheck]

    public init(registry: MetricsRegistry, readiness: [ReadinessCheck]) {
        self.registry = registry
        self.readiness = readiness
    }

    /// The answer for one of the three paths, nil for any other path.
    public func respond(to request: HTTPRequestMessage) -> HTTPResponseMessage? {
        let path = request.path
        guard Self.paths.contains(path) else { return nil }
        guard request.method == "GET" else {
            var response = Self.text(405, "\(path) answers GET only\n")
            response.headers.add("Allow", "GET")
            return response
        }
        switch path {
        case "/healthz":
            return Self.text(200, "ok\n")
        case "/readyz":
            if let reason = notReadyReason() { return Self.text(503, "not ready: \(Self.oneLine(reason))\n") }
            return Self.text(200, "ready\n")
        default:
            var response = Self.text(200, registry.exposition())
            response.headers["Content-Type"] = PrometheusText.contentType
            return response
        }
    }

    /// The first failing check's reason, nil when the process is ready.
    public func notReadyReason() -> String? {
        for check in readiness {
            if let reason = check.check() { return reason }
        }
        return nil
    }

    static func text(_ status: Int, _ body: String) -> HTTPResponseMessage {
        var headers = HTTPHeaders()
        headers.add("Content-Type", "text/plain; charset=utf-8")
        headers.add("Cache-Control", "no-store")
        return HTTPResponseMessage(status: status, headers: headers, body: Data(body.utf8))
    }

    /// `text` on one line, control characters as spaces, at most 300 characters.
    static func oneLine(_ text: String) -> String {
        let flat = String(String.UnicodeScalarView(text.unicodeScalars.map {
            CharacterSet.controlCharacters.contains($0) ? " " : $0
        }))
        return flat.count > 300 ? String(flat.prefix(299)) + "…" : flat
    }
}
