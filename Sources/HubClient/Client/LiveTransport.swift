import Foundation
import SystemText
import HTTPKit
#if canImport(FoundationNetworking)
import FoundationNetworking
#endif

/// The network transport over `URLSession`.
///
/// Rules (docs/hub-api.md, "Client rules"): HTTPS only, except plain HTTP to loopback
/// hosts; redirects are never followed (the 3xx response is returned and the client rejects
/// it); bodies over `HubTransportPolicy.maxResponseBytes` are cut off and fail; no cookies,
/// no cache. `timeouts.read` is the idle timeout between bytes. URLSession has no connect
/// timeout of its own (under libcurl only its idle timer bounds a connect), so before it
/// sends to a host:port no connection reached in the last `reachableFor` seconds, the
/// transport makes a TCP handshake itself (`TCPConnectProbe`) within `timeouts.connect`
/// (10 s), sending nothing: an unreachable or blackholed Hub fails after 10 s with
/// `cannotConnect`, known unprocessed. The probe also sends a TLS ClientHello and reads the
/// first bytes back: a server speaking plain HTTP on the `https://` port fails at once with
/// `wrongProtocol` (not retried), a silent one after the connect timeout — libcurl would
/// busy-poll a whole CPU waiting for its TLS answer until the idle timeout, on each retry.
/// Skipped when a proxy is configured (`https_proxy`, `all_proxy`…): then URLSession
/// connects to the proxy, not the host. The loopback client bounds each new connection's
/// handshake by `timeouts.connect`.
///
/// Connections: reads (GET, HEAD) share one session whose keep-alive connections are
/// reused across calls and threads. Every other method goes out on a connection of its
/// own (`Connection: close`, a second session). The reason: when a reused keep-alive
/// connection dies before the response, libcurl (under FoundationNetworking) resends
/// the request by itself; for a write that is a silent second write, and with a body it
/// cannot even rewind (it hangs until the timeout). A fresh connection is never resent,
/// so the client's own retry rules (writes only with an Idempotency-Key) stay the only ones.
///
/// Plain HTTP to a loopback host (the served sandbox) goes through HTTPKit's
/// `LoopbackHTTPClient` instead: keep-alive for every method, no silent resends, and
/// far less overhead per request than libcurl. `loopbackFastPath: false` forces
/// URLSession there too (scripts/bench-client measures both).
///
/// Trust: with `TLSTrust.system`, HTTPS goes through URLSession (the system store).
/// Any other trust (a profile's `ca_file`, `SSL_CERT_FILE`, `SSL_CERT_DIR`) sends HTTPS
/// through `CurlExchange`, which hands libcurl that CA bundle per exchange — URLSession
/// on Linux cannot. Both honour libcurl's proxy variables (`HTTPS_PROXY`, `NO_PROXY`…).
public final class LiveTransport: HubTransport, @unchecked Sendable {
    private let pooled: URLSession
    private let oneShot: URLSession
    private let delegate: LiveTransportDelegate
    private let loopback: LoopbackHTTPClient?
    /// Base URLs already validated, with their loopback route when they have one.
    private let routes = ClientLock([URL: LoopbackRoute?]())
    /// When (monotonic seconds) a connection to each host:port last succeeded.
    private let reached = ClientLock([String: TimeInterval]())
    /// How long a successful connection vouches for its host:port (no probe before it).
    static let reachableFor: TimeInterval = 30
    /// Whether URLSession goes through a proxy (then probing the host proves nothing).
    private let proxied: Bool

    /// The CAs HTTPS trusts.
    public let trust: TLSTrust

    public init(maxConnectionsPerHost: Int = 8, loopbackFastPath: Bool = true, trust: TLSTrust = .system) {
        self.trust = trust
        loopback = loopbackFastPath
            ? LoopbackHTTPClient(maxIdlePerHost: maxConnectionsPerHost, maxResponseBytes: HubTransportPolicy.maxResponseBytes) : nil
        delegate = LiveTransportDelegate()
        proxied = Self.proxyConfigured(ProcessEnvironment.all)
        pooled = URLSession(configuration: Self.configuration(maxConnectionsPerHost), delegate: delegate, delegateQueue: nil)
        oneShot = URLSession(configuration: Self.configuration(maxConnectionsPerHost), delegate: delegate, delegateQueue: nil)
    }

    deinit {
        pooled.invalidateAndCancel()
        oneShot.invalidateAndCancel()
    }

    private static func configuration(_ maxConnectionsPerHost: Int) -> URLSessionConfiguration {
        let config = URLSessionConfiguration.ephemeral
        config.httpCookieAcceptPolicy = .never
        config.httpShouldSetCookies = false
        config.urlCache = nil
        config.requestCachePolicy = .reloadIgnoringLocalCacheData
        config.httpMaximumConnectionsPerHost = maxConnectionsPerHost
        config.timeoutIntervalForRequest = HubTimeouts().read
        return config
    }

    public func perform(_ request: HTTPRequestMessage, baseURL: URL, timeouts: HubTimeouts) throws -> HTTPResponseMessage {
        let route = try route(baseURL)   // validates the URL
        if let loopback, let route {
            return try performOnLoopback(loopback, request, route: route, timeouts: timeouts)
        }
        var base = baseURL.absoluteString
        while base.hasSuffix("/") { base.removeLast() }
        guard let url = URL(string: base + request.target) else {
            throw HubTransportError(.other, "cannot form a URL from \(base) and \(request.target)")
        }
        guard trust.isSystem else { return try performWithTrust(request, url: url, timeouts: timeouts) }
        let reusesConnections = request.method == "GET" || request.method == "HEAD"
        var urlRequest = URLRequest(url: url)
        urlRequest.httpMethod = request.method
        urlRequest.timeoutInterval = timeouts.read
        urlRequest.httpShouldHandleCookies = false
        for field in request.headers where field.name.lowercased() != "host" {
            urlRequest.addValue(field.value, forHTTPHeaderField: field.name)
        }
        if !reusesConnections { urlRequest.setValue("close", forHTTPHeaderField: "Connection") }
        if !request.body.isEmpty { urlRequest.httpBody = request.body }

        try ensureReachable(url, timeout: timeouts.connect)
        let task = (reusesConnections ? pooled : oneShot).dataTask(with: urlRequest)
        let exchange = delegate.register(task)
        task.resume()
        exchange.done.wait()
        let response = try exchange.result()
        if let key = Self.hostPort(url) { reached.withLock { $0[key] = MonotonicTime.seconds() } }
        return response
    }

    /// `request` through libcurl with this transport's CA bundle (`CurlExchange`).
    private func performWithTrust(_ request: HTTPRequestMessage, url: URL, timeouts: HubTimeouts) throws -> HTTPResponseMessage {
        try ensureReachable(url, timeout: timeouts.connect)
        let response = try CurlExchange.perform(request, url: url, trust: trust, timeouts: timeouts)
        if let key = Self.hostPort(url) { reached.withLock { $0[key] = MonotonicTime.seconds() } }
        return response
    }

    /// Probes `url`'s host:port with a TCP handshake — and for `https`, a TLS
    /// ClientHello answered in TLS — bounded by `timeout`, unless a connection to it
    /// succeeded in the last `reachableFor` seconds or a proxy is set.
    /// - Throws: `HubTransportError(.cannotConnect)` when no handshake (or no TLS answer)
    ///   completed; `HubTransportError(.wrongProtocol)` when the server answered in plain
    ///   HTTP or other bytes that are not TLS.
    func ensureReachable(_ url: URL, timeout: TimeInterval) throws {
        guard !proxied, let key = Self.hostPort(url), let host = url.host else { return }
        let now = MonotonicTime.seconds()
        if let at = reached.withLock({ $0[key] }), now - at < Self.reachableFor { return }
        let tls = url.scheme?.lowercased() == "https"
        do {
            try TCPConnectProbe.check(host: host, port: UInt16(url.port ?? (tls ? 443 : 80)), timeout: timeout, tls: tls)
        } catch let error as HTTPClientError {
            guard error.kind == .wrongProtocol else { throw HubTransportError(.cannotConnect, error.message) }
            throw HubTransportError(.wrongProtocol, Self.notTLS(url, error.message))
        }
        reached.withLock { $0[key] = MonotonicTime.seconds() }
    }

    /// "https://HOST:PORT: <what the server answered>; <what to do>".
    static func notTLS(_ url: URL, _ answered: String) -> String {
        let host = url.host ?? "", port = url.port ?? 443
        let origin = "https://\(host):\(port)"
        if !answered.contains("plain HTTP") {
            return "\(origin): \(answered); check the port in hub_url"
        }
        if HubTransportPolicy.isLoopback(host) {
            return "\(origin): \(answered); for a plain-HTTP loopback server such as `hubscript sandbox serve`, use http://\(host):\(port)"
        }
        return "\(origin): \(answered); set hub_url to the server's HTTPS address (plain HTTP is allowed only to 127.0.0.1, ::1 and localhost)"
    }

    static func hostPort(_ url: URL) -> String? {
        guard let host = url.host else { return nil }
        return "\(host):\(url.port ?? (url.scheme == "https" ? 443 : 80))"
    }

    /// Whether the environment routes URLSession (libcurl) through a proxy.
    static func proxyConfigured(_ environment: [String: String]) -> Bool {
        ["https_proxy", "HTTPS_PROXY", "http_proxy", "HTTP_PROXY", "all_proxy", "ALL_PROXY"]
            .contains { !(environment[$0] ?? "").isEmpty }
    }
}

extension LiveTransport {
    /// Where plain HTTP to a loopback base URL goes.
    struct LoopbackRoute {
        let host: String
        let port: UInt16
        /// The base URL's path without a trailing slash, put before each request target.
        let pathPrefix: String
    }

    /// Validates `baseURL` (once per URL: the answer is cached) and returns its loopback
    /// route, or nil when it goes through URLSession.
    private func route(_ baseURL: URL) throws -> LoopbackRoute? {
        if let known = routes.withLock({ $0[baseURL] }) { return known }
        try HubTransportPolicy.validate(baseURL)
        var route: LoopbackRoute?
        if baseURL.scheme == "http", let host = baseURL.host, LoopbackHTTPClient.isLoopback(host) {
            var path = baseURL.path
            while path.hasSuffix("/") { path.removeLast() }
            route = LoopbackRoute(host: host, port: UInt16(baseURL.port ?? 80), pathPrefix: path)
        }
        routes.withLock { $0[baseURL] = .some(route) }
        return route
    }

    private func performOnLoopback(_ client: LoopbackHTTPClient, _ request: HTTPRequestMessage, route: LoopbackRoute,
                                   timeouts: HubTimeouts) throws -> HTTPResponseMessage {
        var prefixed = request
        prefixed.target = route.pathPrefix + request.target
        do {
            return try client.perform(prefixed, host: route.host, port: route.port, timeout: timeouts.read,
                                      connectTimeout: timeouts.connect)
        } catch let error as HTTPClientError {
            switch error.kind {
            case .cannotConnect: throw HubTransportError(.cannotConnect, error.message)
            case .connectionLost: throw HubTransportError(.connectionLost, error.message)
            case .timedOut: throw HubTransportError(.timedOut, error.message)
            case .tooLarge: throw HubTransportError(.tooLarge, error.message)
            case .notLoopback: throw HubTransportError(.insecure, error.message)
            case .invalidResponse: throw HubTransportError(.other, error.message)
            case .wrongProtocol:
                throw HubTransportError(.wrongProtocol, "http://\(route.host):\(route.port): \(error.message); use https://\(route.host):\(route.port)")
            }
        }
    }
}

/// The state of one in-flight exchange; written by delegate callbacks, read by the
/// waiting caller after `done` is signalled.
final class LiveExchange: @unchecked Sendable {
    let done = DispatchSemaphore(value: 0)
    var response: HTTPURLResponse?
    var data = Data()
    var tooLarge = false
    var error: Error?

    func result() throws -> HTTPResponseMessage {
        if tooLarge {
            throw HubTransportError(.tooLarge, "response body exceeds \(HubTransportPolicy.maxResponseBytes) bytes")
        }
        if let error { throw LiveExchange.map(error) }
        guard let response else { throw HubTransportError(.connectionLost, "no response arrived") }
        var headers = HTTPHeaders()
        for (name, value) in response.allHeaderFields {
            headers.add(String(describing: name), String(describing: value))
        }
        return HTTPResponseMessage(status: response.statusCode, headers: headers, body: data)
    }

    static func map(_ error: Error) -> HubTransportError {
        guard let urlError = error as? URLError else {
            return HubTransportError(.other, String(describing: error))
        }
        switch urlError.code {
        case .timedOut:
            return HubTransportError(.timedOut, "no data arrived within the timeout")
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet:
            return HubTransportError(.cannotConnect, urlError.localizedDescription)
        case .serverCertificateUntrusted, .serverCertificateHasUnknownRoot, .serverCertificateHasBadDate,
             .serverCertificateNotYetValid:
            return HubTransportError(.untrustedCertificate,
                                     "its TLS certificate does not verify against the system's CAs (\(urlError.localizedDescription)); nothing was sent")
        case .networkConnectionLost, .badServerResponse:
            return HubTransportError(.connectionLost, "the connection closed before the response arrived")
        default:
            // FoundationNetworking reports libcurl's certificate failures as an unknown
            // error carrying libcurl's words ("SSL certificate problem: …").
            if urlError.localizedDescription.contains("SSL certificate problem")
                || urlError.localizedDescription.contains("SSL peer certificate") {
                return HubTransportError(.untrustedCertificate,
                                         "its TLS certificate does not verify against the system's CAs (\(urlError.localizedDescription)); nothing was sent")
            }
            return HubTransportError(.other, urlError.localizedDescription)
        }
    }
}

/// Routes URLSession callbacks to the exchange of each task. Tasks are keyed by
/// identity: `taskIdentifier` is only unique within one session, and both sessions
/// share this delegate.
final class LiveTransportDelegate: NSObject, URLSessionDataDelegate, @unchecked Sendable {
    private let exchanges = ClientLock([ObjectIdentifier: LiveExchange]())

    func register(_ task: URLSessionTask) -> LiveExchange {
        let exchange = LiveExchange()
        exchanges.withLock { $0[ObjectIdentifier(task)] = exchange }
        return exchange
    }

    private func exchange(_ task: URLSessionTask) -> LiveExchange? {
        exchanges.withLock { $0[ObjectIdentifier(task)] }
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive response: URLResponse,
                    completionHandler: @escaping (URLSession.ResponseDisposition) -> Void) {
        guard let exchange = exchange(dataTask) else { return completionHandler(.cancel) }
        exchange.response = response as? HTTPURLResponse
        if response.expectedContentLength > Int64(HubTransportPolicy.maxResponseBytes) {
            exchange.tooLarge = true
            return completionHandler(.cancel)
        }
        completionHandler(.allow)
    }

    func urlSession(_ session: URLSession, dataTask: URLSessionDataTask, didReceive data: Data) {
        guard let exchange = exchange(dataTask), !exchange.tooLarge else { return }
        exchange.data.append(data)
        if exchange.data.count > HubTransportPolicy.maxResponseBytes {
            exchange.tooLarge = true
            exchange.data = Data()
            dataTask.cancel()
        }
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, willPerformHTTPRedirection response: HTTPURLResponse,
                    newRequest request: URLRequest, completionHandler: @escaping (URLRequest?) -> Void) {
        completionHandler(nil)
    }

    func urlSession(_ session: URLSession, task: URLSessionTask, didCompleteWithError error: Error?) {
        guard let exchange = exchanges.withLock({ $0.removeValue(forKey: ObjectIdentifier(task)) }) else { return }
        exchange.error = error
        exchange.done.signal()
    }
}
