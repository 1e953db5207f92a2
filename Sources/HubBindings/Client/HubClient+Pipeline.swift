import Foundation
import HTTPKit

typealias Reapply = (HubResponse) throws -> HubJSON?

extension HubClient {
    /// The one pipeline every call goes through. See the rules in `RetryPolicy`,
    /// `RateGovernor`, `SessionManager` and `HubClient.send(_:reapply:)`.
    func execute(_ original: HubRequest, reapply: Reapply?) throws -> HubResponse {
        try checkOpen(original)
        var request = original
        if request.takesIfMatch, request.ifMatch == nil {
            request.ifMatch = cachedETag(for: request)
        }
        let retry = options.retry
        var attempt = 1
        var refreshed = false
        var conflictRounds = 0

        while true {
            governor.acquire()
            let auth = try authorization(for: request)
            let requestID = UUID().uuidString.lowercased()
            let message = makeMessage(request, authorization: auth.header, requestID: requestID)

            let raw: HTTPResponseMessage
            do {
                raw = try transport.perform(message, baseURL: baseURL, timeouts: options.timeouts)
            } catch {
                let failure = Self.transportFailure(error, requestID: requestID)
                if failure.code == HubError.Code.transportError, request.isRetryable, attempt < retry.maxAttempts {
                    options.clock.sleep(retry.backoff(afterAttempt: attempt, random: options.random))
                    attempt += 1
                    continue
                }
                throw failure
            }

            governor.observe(raw.headers)
            warnIfDeprecated(raw.headers)
            let rid = raw.headers["X-Request-Id"] ?? requestID
            if (200..<300).contains(raw.status) {
                let response = try Self.makeResponse(raw, requestID: rid, decode: request.decodesBody)
                remember(response, for: request)
                return response
            }
            if (300..<400).contains(raw.status) {
                throw HubError(code: HubError.Code.redirectRefused,
                               message: "The server answered \(raw.status) redirecting to \(raw.headers["Location"] ?? "nowhere")",
                               status: raw.status, requestID: rid)
            }
            let error = Self.decodeError(raw, requestID: rid)
            let retryAfter = RetryPolicy.retryAfter(raw.headers)

            // Auth: one refresh and replay per call.
            if raw.status == 401, request.authenticated, let session {
                if error.code == HubError.Code.unauthenticated, !refreshed {
                    refreshed = true
                    _ = try session.token(after: auth.generation, refresh: refresher)
                    continue
                }
                if error.code == HubError.Code.sessionRevoked || error.code == HubError.Code.refreshTokenReused {
                    session.end(reason: error.code)
                    throw session.endedError(error.code, requestID: rid)
                }
                throw error
            }
            if error.code == HubError.Code.unsupportedAPIVersion {
                state.withLock { $0.halt = error }
                throw error
            }
            if raw.status == 403 {
                invalidateCapabilities()
                throw error
            }
            if error.code == HubError.Code.versionConflict, let reapply, conflictRounds < 3 {
                conflictRounds += 1
                let current = try execute(HubRequest(.get, request.etagPath, feature: request.feature), reapply: nil)
                guard let body = try reapply(current) else { throw error }
                if request.method != .delete { request.body = body }
                request.ifMatch = current.etag
                continue
            }
            if let feature = request.feature, raw.status == 404 || raw.status == 501 {
                throw disable(feature: feature, because: error)
            }
            if let wait = retryDelay(for: raw.status, error: error, request: request, retryAfter: retryAfter, attempt: attempt) {
                if raw.status == 429 { governor.pause(for: wait) } else { options.clock.sleep(wait) }
                attempt += 1
                continue
            }
            throw error
        }
    }

    /// The wait before the next attempt, or nil when the failure is final.
    private func retryDelay(for status: Int, error: HubError, request: HubRequest, retryAfter: TimeInterval?,
                            attempt: Int) -> TimeInterval? {
        let retry = options.retry
        guard attempt < retry.maxAttempts else { return nil }
        let wait: TimeInterval
        if status == 429 {
            // Rejected before processing: safe to resend, writes included.
            wait = retryAfter ?? retry.backoff(afterAttempt: attempt, random: options.random)
        } else if error.code == HubError.Code.idempotencyKeyInFlight {
            wait = retryAfter ?? retry.inFlightDelay
        } else if status >= 500, status != 501, request.isRetryable {
            wait = (status == 503 ? retryAfter : nil) ?? retry.backoff(afterAttempt: attempt, random: options.random)
        } else {
            return nil
        }
        return wait <= retry.maxRetryAfter ? wait : nil
    }

    /// Fails at once when traffic is halted or the request's feature is off.
    private func checkOpen(_ request: HubRequest) throws {
        let (halt, featureOff) = state.withLock { s in
            (s.halt, request.feature.map { s.disabledFeatures.contains($0) } ?? false)
        }
        if let halt {
            throw HubError(code: HubError.Code.clientHalted,
                           message: "No further calls are made: the Hub refused the API version (\(halt.message))",
                           status: halt.status, details: halt.details, requestID: halt.requestID)
        }
        if featureOff, let feature = request.feature {
            throw Self.featureError(feature)
        }
    }

    /// The Authorization header and the session generation it came from.
    private func authorization(for request: HubRequest) throws -> (header: String?, generation: Int) {
        guard request.authenticated else { return (nil, 0) }
        switch credential {
        case .apiKey(let secret): return ("Bearer \(secret)", 0)
        case .none: return (nil, 0)
        case .session:
            guard let session else { return (nil, 0) }
            let token = try session.token(refresh: refresher)
            return ("Bearer \(token.token)", token.generation)
        }
    }

    /// Exchanges a refresh token for new tokens (no retries: a lost answer must not
    /// lead to reusing the rotated token).
    var refresher: SessionManager.Refresher {
        { [self] refreshToken in
            let response = try execute(HubRequest(.post, "/auth/token/refresh", body: ["refresh_token": .string(refreshToken)],
                                                  authenticated: false), reapply: nil)
            return try IssuedTokens(response.json, requestID: response.requestID)
        }
    }

    /// The wire message: standard headers first, then the request's own.
    func makeMessage(_ request: HubRequest, authorization: String?, requestID: String) -> HTTPRequestMessage {
        var headers = HTTPHeaders()
        headers.add("Substratal-Version", "1")
        headers.add("User-Agent", HubClientVersion.userAgent)
        headers.add("X-Request-Id", requestID)
        headers.add("Accept", "application/json")
        if let authorization { headers.add("Authorization", authorization) }
        var body = Data()
        if let json = request.body {
            body = json.encoded()
            headers.add("Content-Type", "application/json")
        }
        if let key = request.idempotencyKey { headers.add("Idempotency-Key", key) }
        if let ifMatch = request.ifMatch { headers.add("If-Match", ifMatch) }
        for field in request.headers { headers[field.name] = field.value }
        return HTTPRequestMessage(method: request.method.rawValue, target: request.target(prefix: options.apiPrefix),
                                  headers: headers, body: body)
    }
}
