import Foundation
import HTTPKit
import SystemText

/// How the client retries a send: transport failures, `5xx` and `429`, each time with the
/// same Idempotency-Key (the server replays a key it already accepted), at most
/// `maxAttempts` attempts in all.
public struct DispatchRetryPolicy: Sendable, Equatable {
    /// Attempts per call, the first included.
    public var maxAttempts: Int
    /// The first backoff in seconds; it doubles per attempt, jittered between half and all.
    public var baseDelay: TimeInterval
    public var maxDelay: TimeInterval
    /// The longest `Retry-After` honoured; a longer one is cut to this.
    public var maxRetryAfter: TimeInterval

    public init(maxAttempts: Int = 4, baseDelay: TimeInterval = 0.5, maxDelay: TimeInterval = 8, maxRetryAfter: TimeInterval = 30) {
        self.maxAttempts = max(1, maxAttempts)
        self.baseDelay = baseDelay
        self.maxDelay = maxDelay
        self.maxRetryAfter = maxRetryAfter
    }

    /// The wait after failed attempt `attempt` (from 1); `unit` is a random number in [0, 1).
    public func backoff(afterAttempt attempt: Int, unit: Double) -> TimeInterval {
        let exponential = min(maxDelay, baseDelay * pow(2, Double(max(0, attempt - 1))))
        return exponential * (0.5 + 0.5 * unit)
    }
}

/// The client of the Dispatch relay (docs/dispatch.md): `POST /v1/notifications` with a
/// machine bearer token and an Idempotency-Key, and `GET /health`.
///
/// The token goes into the `Authorization` header and nowhere else: no message, error or
/// description of this type contains it. Whatever a server answers is masked before this
/// type returns it (an error's code, message, hint and field, a receipt's id): the token
/// and its common encodings (`SecretForms.all`) become `<secret NAME>`, whatever the
/// status, so a server that echoes the `Authorization` header hands nobody the token. Sends are paced under the token's limit
/// (`DispatchSendPacer`, 600 a minute); `GET /health` is not. Thread-safe.
public final class DispatchClient: Sendable {
    public let baseURL: URL
    public let retry: DispatchRetryPolicy
    private let token: String
    /// Where the token came from, for messages ("$NAME", "the vault entry 'dispatch/ci'").
    public let tokenSource: String
    private let transport: any DispatchTransport
    private let sleep: @Sendable (TimeInterval) -> Void
    /// Paces sends under the machine token's limit.
    public let pacer: DispatchSendPacer
    /// Masks the token, in its encodings, in what the server answers.
    private let answerMask: SecretMatcher
    /// What the token becomes in an answer: `<secret NAME>`.
    private let maskText: String

    /// - Throws: `DispatchError` `insecure_transport` unless `baseURL` is `https://`, or
    ///   `http://` to a loopback host; `configuration_error` for an empty token or one
    ///   with spaces or control characters.
    /// `tokenName` names the token in masks (`<secret dispatch/ci>`).
    public init(baseURL: URL, token: String, tokenSource: String = "the configured token", tokenName: String = "dispatch token",
                transport: any DispatchTransport,
                retry: DispatchRetryPolicy = DispatchRetryPolicy(),
                sleep: @escaping @Sendable (TimeInterval) -> Void = { Thread.sleep(forTimeInterval: $0) },
                pacer: DispatchSendPacer = DispatchSendPacer()) throws {
        try Self.checkURL(baseURL)
        guard !token.isEmpty, token.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw DispatchError(code: DispatchError.Code.configuration,
                                message: "the Dispatch token from \(tokenSource) is empty or holds spaces, control or non-ASCII characters",
                                hint: "Store the machine token exactly as the Dispatch operator issued it.")
        }
        self.baseURL = baseURL
        self.token = token
        self.tokenSource = tokenSource
        self.transport = transport
        self.retry = retry
        self.sleep = sleep
        self.pacer = pacer
        maskText = "<secret \(tokenName)>"
        answerMask = SecretMatcher(SecretForms.all(Array(token.utf8), mask: Array(maskText.utf8)))
    }

    /// `error` with the token masked in everything the server may have put in it.
    func masked(_ error: DispatchError) -> DispatchError {
        DispatchError(code: answerMask.masked(error.code), message: answerMask.masked(error.message), status: error.status,
                      field: error.field.map(answerMask.masked), hint: answerMask.masked(error.hint))
    }

    /// Runs `body`, masking the token in any `DispatchError` it throws.
    private func maskingErrors<T>(_ body: () throws -> T) throws -> T {
        do { return try body() } catch let error as DispatchError { throw masked(error) }
    }

    /// `https://…`, or `http://` to 127.0.0.0/8, ::1 or localhost (docs/dispatch.md: plain
    /// HTTP is only for development on one machine), holding no credential
    /// (`checkCarriesNoCredential`).
    public static func checkURL(_ url: URL) throws {
        try checkCarriesNoCredential(url)
        let scheme = url.scheme?.lowercased()
        if scheme == "https", url.host?.isEmpty == false { return }
        if scheme == "http", let host = url.host, LoopbackHTTPClient.isLoopback(host) { return }
        throw DispatchError(code: DispatchError.Code.insecureTransport,
                            message: "refusing the Dispatch URL \(url.absoluteString): only https:// is allowed, or http:// to 127.0.0.1, ::1 or localhost",
                            hint: "Use the server's https:// address.")
    }

    /// Whether the token this client sends satisfies `test` (a comparison with another
    /// credential); the token itself is never handed out.
    public func token(satisfies test: (String) -> Bool) -> Bool { test(token) }

    /// Refuses a URL with a user name, password, query or fragment (`configuration_error`):
    /// the URL is shown by describe, in errors and to recipes, so no credential may ride in
    /// it. The refusal shows the URL without them.
    public static func checkCarriesNoCredential(_ url: URL) throws {
        if url.user != nil || url.password != nil || url.query != nil || url.fragment != nil {
            var shown = URLComponents()
            shown.scheme = url.scheme
            shown.host = url.host
            shown.port = url.port
            shown.path = url.path
            throw DispatchError(code: DispatchError.Code.configuration,
                                message: "refusing the Dispatch URL \(shown.string ?? "(unreadable)"): a Dispatch URL holds no user name, password, query or fragment, which describe, errors and recipes (conn.url) would show; give the server's base URL and keep its credential in a vault entry named by token_ref",
                                hint: "Remove the user:password@, ?query and #fragment from the URL.")
        }
    }

    /// Sends `notification` with `idempotencyKey` (1–255 visible ASCII characters; the
    /// same key for every attempt, so a retry or a resumed run never notifies twice).
    ///
    /// - Throws: `DispatchError`: `unauthorized` (401: the token was refused),
    ///   `invalid_title` / `invalid_body` / `invalid_json` (400, with `field`),
    ///   `idempotency_key_reused` (409: the key was used with another notification),
    ///   `server_error` (5xx or 429 on every attempt), `transport_error` (no answer on
    ///   every attempt), `invalid_response`, `redirect_refused`, `not_found`, or another
    ///   code the server sent.
    public func send(_ notification: DispatchNotification, idempotencyKey key: String) throws -> DispatchReceipt {
        let receipt = try maskingErrors { try sendUnmasked(notification, idempotencyKey: key) }
        return DispatchReceipt(id: answerMask.masked(receipt.id), acceptedDevices: receipt.acceptedDevices, replayed: receipt.replayed)
    }

    private func sendUnmasked(_ notification: DispatchNotification, idempotencyKey key: String) throws -> DispatchReceipt {
        guard (1...255).contains(key.utf8.count), key.utf8.allSatisfy({ $0 > 0x20 && $0 < 0x7F }) else {
            throw DispatchError(code: DispatchError.Code.configuration,
                                message: "an Idempotency-Key must be 1–255 visible ASCII characters (got \(key.utf8.count) bytes)")
        }
        var headers = HTTPHeaders()
        headers.add("Authorization", "Bearer \(token)")
        headers.add("Content-Type", "application/json")
        headers.add("Accept", "application/json")
        headers.add("Idempotency-Key", key)
        headers.add("User-Agent", "hubscript-dispatch/1")
        let request = HTTPRequestMessage(method: "POST", target: "/v1/notifications", headers: headers, body: notification.json)
        let response = try exchange(request, paced: true)
        guard response.status == 202 else { throw failure(response, key: key) }
        guard let object = DispatchJSON.parse(response.body),
              let id = object["id"]?.stringValue, !id.isEmpty,
              let devices = object["acceptedDevices"]?.integerText.flatMap({ Int(exactly: $0) }), devices >= 0
        else {
            throw DispatchError(code: DispatchError.Code.invalidResponse,
                                message: "\(baseURL.absoluteString) answered 202 without {\"id\", \"acceptedDevices\"}; the notification may have been accepted",
                                status: 202, hint: "Check dispatch_url; sending again with the same key is safe.")
        }
        let replayed = response.headers["Idempotent-Replayed"].map { HTTPHeaders.trimmingWhitespace($0).lowercased() == "true" } ?? false
        return DispatchReceipt(id: id, acceptedDevices: devices, replayed: replayed)
    }

    /// `GET /health` (unauthenticated; the token is not sent).
    /// - Throws: `DispatchError` unless the server answers 200 `{"status":"ok"}`.
    public func health() throws {
        try maskingErrors { try healthUnmasked() }
    }

    private func healthUnmasked() throws {
        let request = HTTPRequestMessage(method: "GET", target: "/health", headers: ["Accept": "application/json"])
        let response = try exchange(request)
        guard response.status == 200 else { throw failure(response, key: nil) }
        guard let object = DispatchJSON.parse(response.body), object["status"]?.stringValue == "ok" else {
            throw DispatchError(code: DispatchError.Code.invalidResponse,
                                message: "\(baseURL.absoluteString)/health did not answer {\"status\":\"ok\"}", status: 200,
                                hint: "Check that the URL is a Dispatch server.")
        }
    }

    /// Sends `request` until a response that is not `5xx`/`429` arrives, or the attempts
    /// run out; returns the last response (`5xx` or `429` only if it is the last attempt's).
    /// A `paced` request first waits for a slot from `pacer`, and its answers feed it.
    private func exchange(_ request: HTTPRequestMessage, paced: Bool = false) throws -> HTTPResponseMessage {
        var attempt = 0
        while true {
            attempt += 1
            let last = attempt >= retry.maxAttempts
            let response: HTTPResponseMessage
            if paced {
                let wait = pacer.reserve()
                if wait > 0 { sleep(wait) }
            }
            do {
                response = try transport.perform(request, baseURL: baseURL)
                if paced { pacer.observe(response.headers) }
            } catch {
                let failure = error as? HTTPClientError ?? HTTPClientError(.connectionLost, "\(error)")
                if failure.kind == .tooLarge || failure.kind == .notLoopback || failure.kind == .wrongProtocol || last {
                    // The failure may quote the server's first bytes, cut short: no piece of
                    // the token stays in it. (Only here: pieces masked in what a server
                    // repeats of a recipe's text would tell the recipe which guesses are
                    // pieces of the token.)
                    let quoted = SecretPieces.masked(failure.message, secret: token, mask: maskText)
                    throw DispatchError(code: DispatchError.Code.transportError,
                                        message: "no answer from Dispatch at \(baseURL.absoluteString) after \(attempt) attempt\(attempt == 1 ? "" : "s"): \(quoted)",
                                        hint: failure.kind == .wrongProtocol
                                            ? "Fix the Dispatch URL: http:// for a plain-HTTP loopback server, https:// for a TLS one."
                                            : failure.kind == .cannotConnect || failure.kind == .notLoopback
                                            ? "Check the network and the Dispatch URL."
                                            : "The notification may have arrived; sending again with the same key is safe (resume the run).")
                }
                sleep(retry.backoff(afterAttempt: attempt, unit: Double.random(in: 0..<1)))
                continue
            }
            guard response.status >= 500 || response.status == 429, !last else { return response }
            let delay = Self.retryAfter(response).map { min($0, retry.maxRetryAfter) }
                ?? retry.backoff(afterAttempt: attempt, unit: Double.random(in: 0..<1))
            sleep(delay)
        }
    }

    private static func retryAfter(_ response: HTTPResponseMessage) -> TimeInterval? {
        response.headers["Retry-After"].flatMap { Double(HTTPHeaders.trimmingWhitespace($0)) }.map { max(0, $0) }
    }

    /// The error for a response that is not the one wanted.
    private func failure(_ response: HTTPResponseMessage, key: String?) -> DispatchError {
        let status = response.status
        let sent = Self.serverError(response.body)
        let where_ = baseURL.absoluteString
        switch status {
        case 401:
            return DispatchError(code: sent?.code ?? DispatchError.Code.unauthorized,
                                 message: "the Dispatch token was refused: \(where_) does not accept the machine token from \(tokenSource)",
                                 status: status, hint: "Check the token (is it this server's, and not revoked?) and the Dispatch URL.")
        case 400:
            let code = sent?.code ?? DispatchError.Code.invalidJSON
            let field: String? = code == DispatchError.Code.invalidTitle ? "title" : code == DispatchError.Code.invalidBody ? "body" : nil
            return DispatchError(code: code, message: "Dispatch refused the notification: \(sent?.message ?? "bad request")",
                                 status: status, field: field,
                                 hint: field.map { "Fix the \($0)." } ?? "The request was malformed; this is a bug in hubscript.")
        case 409 where sent?.code == DispatchError.Code.idempotencyKeyReused:
            return DispatchError(code: DispatchError.Code.idempotencyKeyReused,
                                 message: "the Idempotency-Key \(key ?? "") was already used with a different notification",
                                 status: status, hint: "Use one key per notification.")
        case 300..<400:
            return DispatchError(code: DispatchError.Code.redirectRefused,
                                 message: "\(where_) redirected (HTTP \(status)) to \(response.headers["Location"] ?? "somewhere"); redirects are never followed",
                                 status: status, hint: "Set the Dispatch URL to the final address.")
        case 404:
            return DispatchError(code: sent?.code ?? DispatchError.Code.notFound,
                                 message: "\(where_) has no Dispatch API here (404 for \(key == nil ? "/health" : "/v1/notifications"))",
                                 status: status, hint: "Check the Dispatch URL.")
        case 429, 500...:
            return DispatchError(code: sent?.code ?? DispatchError.Code.serverError,
                                 message: "Dispatch at \(where_) failed on all \(retry.maxAttempts) attempts: \(sent?.message ?? "HTTP \(status)")",
                                 status: status, hint: key == nil ? "Try again later." : "Try again later; sending again with the same key is safe.")
        default:
            return DispatchError(code: sent?.code ?? "http_\(status)",
                                 message: "Dispatch refused the request: \(sent?.message ?? "HTTP \(status)")", status: status,
                                 hint: "See the message.")
        }
    }

    /// `{"error":{"code","message"}}`, if that is what the body is.
    private static func serverError(_ body: Data) -> (code: String, message: String)? {
        guard let error = DispatchJSON.parse(body)?["error"], let code = error["code"]?.stringValue, !code.isEmpty else { return nil }
        return (code, error["message"]?.stringValue ?? code)
    }
}
