import Foundation
import HTTPKit
import JSONKit

typealias Reapply = (HubResponse) throws -> HubJSON?

extension HubClient {
    /// The one pipeline every call goes through. See the rules in `RetryPolicy`,
    /// `RateGovernor`, `SessionManager` and `HubClient.send(_:reapply:)`.
    func execute(_ original: HubRequest, reapply: Reapply?) throws -> HubResponse {
        try checkOpen(original)
        var call = CallProgress(request: original)
        if call.request.takesIfMatch, call.request.ifMatch == nil {
            call.request.ifMatch = cachedETag(for: call.request)
        }
        while true {
            guard let sent = try sendOnce(&call) else { continue }   // a transport failure worth retrying
            if let response = try accepted(sent, for: call.request) { return response }
            try recover(from: sent, &call, reapply: reapply)          // throws the final error, or try again
        }
    }

    /// One call across its attempts: the request as it will be sent next, and what the
    /// rules have used up (retries, the one token refresh, version-conflict rounds).
    struct CallProgress {
        var request: HubRequest
        var attempt = 1
        var refreshed = false
        var conflictRounds = 0
        /// Seconds waited so far on `idempotency_key_in_flight` (bounded by
        /// `RetryPolicy.maxInFlightWait`, not by attempts).
        var inFlightWaited: TimeInterval = 0
    }

    /// An answer the server gave to one attempt.
    struct Answer {
        let raw: HTTPResponseMessage
        /// The server's `X-Request-Id`, or the one the client sent.
        let requestID: String
        /// The session generation the request was authorized with.
        let authGeneration: Int
    }

    /// Sends the request once (after the governor lets it go). Returns nil after a
    /// transport failure that will be retried (having waited the backoff).
    /// - Throws: the transport failure when it is final.
    private func sendOnce(_ call: inout CallProgress) throws -> Answer? {
        let observe = options.observe
        let rateClass = RateClass.of(method: call.request.method.rawValue, path: call.request.path)
        pacer.acquire(rateClass, authenticated: call.request.authenticated) { wait, reason in
            observe?(.rateLimitWait(seconds: wait, reason: reason))
        }
        let auth = try authorization(for: call.request)
        let requestID = UUID().uuidString.lowercased()
        let message = makeMessage(call.request, authorization: auth.header, requestID: requestID)
        let raw: HTTPResponseMessage
        let started = options.clock.now()
        let method = call.request.method.rawValue, path = call.request.path
        do {
            raw = try transport.perform(message, baseURL: baseURL, timeouts: options.timeouts)
        } catch {
            // Its text may quote what the server sent: never the credentials the request carried.
            let failure = HubAnswerMask.masked(Self.transportFailure(error, requestID: requestID),
                                               authorization: auth.header, carried: call.request.carriedSecrets)
            observe?(.transportFailed(method: method, path: path, message: failure.message,
                                      seconds: options.clock.now() - started))
            guard failure.code == HubError.Code.transportError, call.request.isRetryable,
                  ![.wrongProtocol, .untrustedCertificate].contains((error as? HubTransportError)?.kind),   // the same server answers the same way
                  call.attempt < options.retry.maxAttempts else { throw failure }
            let wait = options.retry.backoff(afterAttempt: call.attempt, random: options.random)
            observe?(.retrying(method: method, path: path, attempt: call.attempt + 1, maxAttempts: options.retry.maxAttempts,
                               wait: wait, reason: failure.message))
            options.clock.sleep(wait)
            call.attempt += 1
            return nil
        }
        // The credential this request carried never comes back in what the client returns.
        let answer = HubAnswerMask.masked(raw, authorization: auth.header, carried: call.request.carriedSecrets)
        observe?(.answered(method: method, path: path, status: raw.status, seconds: options.clock.now() - started))
        pacer.observe(rateClass, raw.headers)
        warnIfDeprecated(raw.headers)
        return Answer(raw: answer, requestID: answer.headers["X-Request-Id"] ?? requestID, authGeneration: auth.generation)
    }

    /// The response of a 2xx answer (remembered for ETags); nil for an error answer.
    /// - Throws: `redirect_refused` for a 3xx (the client never follows redirects).
    private func accepted(_ answer: Answer, for request: HubRequest) throws -> HubResponse? {
        let raw = answer.raw
        if (200..<300).contains(raw.status) {
            let response = try Self.makeResponse(raw, requestID: answer.requestID, decode: request.decodesBody)
            remember(response, for: request)
            return response
        }
        if (300..<400).contains(raw.status) {
            throw HubError(code: HubError.Code.redirectRefused,
                           message: "The server answered \(raw.status) redirecting to \(raw.headers["Location"] ?? "nowhere")",
                           status: raw.status, requestID: answer.requestID)
        }
        return nil
    }

    /// Applies the rules to an error answer, in order: authentication (one refresh),
    /// an unsupported API version (halts the client), 403 (Capabilities are stale), a
    /// version conflict (re-apply on the current state), an unavailable feature, and
    /// retries. Returns when the call should be sent again; otherwise throws.
    private func recover(from answer: Answer, _ call: inout CallProgress, reapply: Reapply?) throws {
        let raw = answer.raw
        let error = Self.decodeError(raw, requestID: answer.requestID)
        if raw.status == 401, call.request.authenticated, let session {
            try recoverAuthentication(error, session: session, answer: answer, &call)
            return
        }
        if error.code == HubError.Code.unsupportedAPIVersion {
            state.withLock { $0.halt = error }
            throw error
        }
        if raw.status == 403 {
            invalidateCapabilities()
            throw error
        }
        if error.code == HubError.Code.versionConflict, let reapply, call.conflictRounds < 3 {
            try reapplyOnCurrentState(error, reapply: reapply, &call)
            return
        }
        if let feature = call.request.feature, raw.status == 501 || (raw.status == 404 && !call.request.namesResource) {
            throw disable(feature: feature, because: error)
        }
        let retryAfter = RetryPolicy.retryAfter(raw.headers)
        if error.code == HubError.Code.idempotencyKeyInFlight {
            let wait = min(retryAfter ?? options.retry.inFlightDelay, 10)
            guard call.inFlightWaited + wait <= options.retry.maxInFlightWait else { throw error }
            options.observe?(.retrying(method: call.request.method.rawValue, path: call.request.path, attempt: call.attempt,
                                       maxAttempts: options.retry.maxAttempts, wait: wait,
                                       reason: "409 \(error.code): the Hub is still running an earlier attempt of this write"))
            options.clock.sleep(wait)
            call.inFlightWaited += wait
            return
        }
        guard let wait = retryDelay(for: raw.status, error: error, request: call.request, retryAfter: retryAfter,
                                    attempt: call.attempt) else { throw error }
        options.observe?(.retrying(method: call.request.method.rawValue, path: call.request.path, attempt: call.attempt + 1,
                                   maxAttempts: options.retry.maxAttempts, wait: wait, reason: "\(raw.status) \(error.code)"))
        // A 429's pause is waited (and announced) by the governor before the next send.
        if raw.status == 429 {
            pacer.pause(RateClass.of(method: call.request.method.rawValue, path: call.request.path), for: wait)
        } else {
            options.clock.sleep(wait)
        }
        call.attempt += 1
    }

    /// A 401 on a session: one refresh and replay per call; a revoked session or a
    /// reused refresh token ends the session. Returns to send again; otherwise throws.
    private func recoverAuthentication(_ error: HubError, session: SessionManager, answer: Answer,
                                       _ call: inout CallProgress) throws {
        if error.code == HubError.Code.unauthenticated, !call.refreshed {
            call.refreshed = true
            _ = try session.token(after: answer.authGeneration, refresh: refresher)
            return
        }
        if error.code == HubError.Code.sessionRevoked || error.code == HubError.Code.refreshTokenReused {
            session.end(reason: error.code)
            throw session.endedError(error.code, requestID: answer.requestID)
        }
        throw error
    }

    /// A version conflict: reads the resource's current state, lets `reapply` rebuild
    /// the body on it (nil: the change no longer applies, so `error` is thrown), and
    /// sends again with the new ETag. At most 3 rounds per call.
    private func reapplyOnCurrentState(_ error: HubError, reapply: Reapply, _ call: inout CallProgress) throws {
        call.conflictRounds += 1
        let current = try execute(HubRequest(.get, call.request.etagPath, feature: call.request.feature), reapply: nil)
        guard let body = try reapply(current) else { throw error }
        if call.request.method != .delete { call.request.body = body }
        call.request.ifMatch = current.etag
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
            var request = HubRequest(.post, "/auth/token/refresh", body: ["refresh_token": .string(refreshToken)], authenticated: false)
            request.carriedSecrets = [refreshToken]
            let response = try execute(request, reapply: nil)
            return try IssuedTokens(response.json, requestID: response.requestID)
        }
    }

    /// Messages from the Hub are shown to people as they come, in hubscript's language.
    static let acceptLanguage = "en"

    /// The wire message: standard headers first, then the request's own.
    func makeMessage(_ request: HubRequest, authorization: String?, requestID: String) -> HTTPRequestMessage {
        var headers = HTTPHeaders()
        headers.add("Substratal-Version", "1")
        headers.add("User-Agent", HubClientVersion.userAgent)
        headers.add("X-Request-Id", requestID)
        headers.add("Accept", "application/json")
        headers.add("Accept-Language", HubClient.acceptLanguage)
        if let authorization { headers.add("Authorization", authorization) }
        var body = Data()
        if let payload = request.payload {
            body = Data(payload.bytes)
            headers.add("Content-Type", "application/json")
        }
        if let key = request.idempotencyKey { headers.add("Idempotency-Key", key) }
        if let ifMatch = request.ifMatch { headers.add("If-Match", ifMatch) }
        for field in request.headers { headers[field.name] = field.value }
        return HTTPRequestMessage(method: request.method.rawValue, target: request.target(prefix: options.apiPrefix),
                                  headers: headers, body: body)
    }
}
