import SQLiteKit
import Foundation
import HTTPKit

/// The request pipeline around the handlers:
///
/// 1. (locked) route, `Substratal-Version`, authentication, the per-caller bucket (an
///    anonymous request: its route's own, `/health`, login or refresh), faults that fail
///    before any change (500/503), then in one write transaction (atomic across processes
///    sharing the store file) the idempotency lookup (replay, reused, in flight), the
///    route's extra bucket and the idempotency reservation;
/// 2. (unlocked) injected latency and the test hook — a second request with the same key
///    arriving now gets `409 idempotency_key_in_flight`;
/// 3. (locked) the handler, in one transaction for writes, and the stored idempotent
///    response; a lost-response fault then marks the committed response `dropped`.
extension HubEngine {
    private struct Prepared {
        let route: Route
        let ctx: RequestContext
        var idempotency: (caller: String, key: String, fingerprint: String)?
        var lost: Bool
    }

    private enum Phase1 {
        case done(Reply)
        case proceed(Prepared)
    }

    func handle(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        let requestId = request.headers["X-Request-Id"].flatMap { id in
            id.isEmpty || id.utf8.count > 200 || id.utf8.contains { $0 < 0x20 || $0 > 0x7E } ? nil : id
        }
            ?? "req_" + HubEngine.randomToken(16)
        var rate: RateLimiter.Outcome?
        lock.lock()
        let ctx = RequestContext(request: request, requestId: requestId, now: nowSeconds)
        let first = prepare(request, ctx, &rate)
        lock.unlock()

        let reply: Reply
        var dropped = false
        switch first {
        case .done(let r): reply = r
        case .proceed(let prep):
            if options.faults.latency > .zero, prep.route.segments != ["health"] { Thread.sleep(forTimeInterval: options.faults.latency.seconds) }
            if let key = prep.idempotency?.key, let hook = afterReservation { hook(key) }
            lock.lock()
            reply = execute(prep)
            lock.unlock()
            dropped = prep.lost
            if let classRate = prep.ctx.classRate { rate = classRate }
        }
        return finish(reply, requestId: requestId, rate: rate, dropped: dropped)
    }

    /// Phase 1, under the lock: every check that can answer before the handler runs,
    /// in the order of the pipeline above. Never throws: a refusal is a `.done` reply.
    private func prepare(_ request: HTTPRequestMessage, _ ctx: RequestContext, _ rate: inout RateLimiter.Outcome?) -> Phase1 {
        do {
            let route = try self.route(request, ctx)
            try checkVersionAndSize(request, route: route)
            if route.auth == .required { ctx.caller = try authenticate(request, now: ctx.now) }
            if options.faults.isUnimplemented(route.segments) {
                throw HubErrorReply(status: 501, code: "not_implemented",
                                    message: "This Hub does not offer \(request.method) \(route.segments.joined(separator: "/")) (injected fault: unimplemented).")
            }
            if request.method == "POST" || request.method == "PATCH" { _ = try ctx.body() }
            let now = options.clock.now().timeIntervalSince1970
            let bucket = ctx.caller.map { "all:" + $0.bucketKey } ?? "anonymous:" + route.anonymousBucket
            rate = limiter.take(bucket, capacity: 100, window: 60, now: now)
            if let r = rate, !r.allowed { throw HubErrorReply.rateLimited(retryAfter: r.retryAfter) }
            if route.isHealth { return .proceed(Prepared(route: route, ctx: ctx, idempotency: nil, lost: false)) }

            let lost = try drawFaults()
            // Lookup, the route's bucket and the reservation are one write transaction:
            // another process sharing the store file waits for it, then finds the key
            // reserved (`409 idempotency_key_in_flight`), never free.
            let decision: IdempotencyDecision
            if route.idempotency == .ignored {
                try takeRouteBucket(route, ctx, &rate, now: now)
                decision = .none
            } else {
                decision = try db.transaction { () throws -> IdempotencyDecision in
                    let decision = try idempotencyDecision(request, route: route, ctx)
                    if case .replay = decision { return decision }
                    try takeRouteBucket(route, ctx, &rate, now: now)
                    if case .reserve(let r) = decision {
                        try idempotencyReserve(caller: r.caller, key: r.key, fingerprint: r.fingerprint, now: ctx.now)
                    }
                    return decision
                }
            }
            switch decision {
            case .replay(let reply): return .done(reply)
            case .reserve(let r): return .proceed(Prepared(route: route, ctx: ctx, idempotency: r, lost: lost))
            case .none: return .proceed(Prepared(route: route, ctx: ctx, idempotency: nil, lost: lost))
            }
        } catch let e as HubErrorReply {
            return .done(e.reply)
        } catch {
            return .done(HubErrorReply.internalError("\(error)").reply)
        }
    }

    /// The route for the request's method and path (after the API prefix, if any); sets
    /// `ctx.params`. Throws 404 for an unknown path, 405 for a known path with another method.
    private func route(_ request: HTTPRequestMessage, _ ctx: RequestContext) throws -> Route {
        var path = Substring(request.path)
        var segments = request.pathSegments[...]
        if let prefix = options.apiPrefix, !prefix.isEmpty, path == prefix || path.hasPrefix(prefix + "/") {
            path = path.dropFirst(prefix.count)
            segments = segments.dropFirst(prefix.split(separator: "/").count)
        }
        // Segments are split before decoding: an id holding an encoded `/` stays one segment.
        let parts = segments.map { Substring($0) }
        var methodMismatch = false
        for r in routes {
            guard let params = r.match(parts) else { continue }
            if r.method == request.method {
                try HubEngine.refuseControlCharacters(params: params, query: ctx.query)
                ctx.params = params
                return r
            }
            methodMismatch = true
        }
        if methodMismatch {
            throw HubErrorReply(status: 405, code: "method_not_allowed", message: "\(request.method) is not allowed on \(path).")
        }
        throw HubErrorReply(status: 404, code: "not_found", message: "No endpoint \(request.method) \(path).")
    }

    /// An id or a query value holding a NUL or another control character (`%00`) is
    /// refused with `400 invalid_request`: stored text ends at a NUL, so
    /// `usr_admin%00zzz` would otherwise read as `usr_admin`.
    static func refuseControlCharacters(params: [String], query: [(name: String, value: String)]) throws {
        func control(_ s: String) -> Bool { s.utf8.contains { $0 < 0x20 || $0 == 0x7F } }
        if let bad = params.first(where: control) {
            throw HubErrorReply(status: 400, code: "invalid_request",
                                message: "The id '\(HubEngine.visible(bad))' in the path holds a control character (such as NUL); ids never do.",
                                details: [("parameter", .string("path"))])
        }
        if let bad = query.first(where: { control($0.name) || control($0.value) }) {
            throw HubErrorReply(status: 400, code: "invalid_request",
                                message: "The query parameter '\(HubEngine.visible(bad.name))' holds a control character (such as NUL).",
                                details: [("parameter", .string(HubEngine.visible(bad.name)))])
        }
    }

    /// `text` (its first 100 characters) with control characters shown percent-encoded
    /// (`%00`), as they came in the URL.
    static func visible(_ text: String) -> String {
        text.prefix(100).unicodeScalars.map { c in
            c.value < 0x20 || c.value == 0x7F ? "%" + (c.value < 0x10 ? "0" : "") + String(c.value, radix: 16, uppercase: true) : String(c)
        }.joined()
    }

    /// `Substratal-Version: 1` (except on /health) and the 1 MiB body cap.
    private func checkVersionAndSize(_ request: HTTPRequestMessage, route: Route) throws {
        if !route.isHealth, request.headers["Substratal-Version"] != "1" {
            throw HubErrorReply(status: 400, code: "unsupported_api_version",
                                message: "Send the header Substratal-Version: 1; this sandbox speaks API version 1 only.",
                                details: [("supported_versions", .array([.string("1")]))])
        }
        if request.body.count > 1_048_576 {
            throw HubErrorReply(status: 413, code: "payload_too_large", message: "The body exceeds 1 MiB.")
        }
    }

    /// Draws the injected faults: throws a 500 or 503 (before any change), or returns
    /// whether the response is to be lost after the change commits.
    private func drawFaults() throws -> Bool {
        let f = options.faults
        guard !f.isNone else { return false }
        let u = faultRNG.unit()
        if u < f.errorRate { throw HubErrorReply.internalError("Injected fault: internal error (nothing was changed).") }
        if u < f.errorRate + f.unavailableRate {
            throw HubErrorReply(status: 503, code: "service_unavailable",
                                message: "Injected fault: service unavailable (nothing was changed).",
                                headers: [("Retry-After", String(f.retryAfterSeconds))])
        }
        return f.lostRate > 0 && faultRNG.unit() < f.lostRate
    }

    private enum IdempotencyDecision {
        /// The key answered before: its stored reply.
        case replay(Reply)
        /// A new key: reserve it once the remaining checks pass.
        case reserve((caller: String, key: String, fingerprint: String))
        /// The route ignores keys, or none was sent where one is optional.
        case none
    }

    /// What the request's `Idempotency-Key` means for this route and caller.
    /// Throws 400 for a bad or missing (where required) key, 409 for a reused or in-flight one.
    private func idempotencyDecision(_ request: HTTPRequestMessage, route: Route, _ ctx: RequestContext) throws -> IdempotencyDecision {
        guard route.idempotency != .ignored, let caller = ctx.caller else { return .none }
        guard let key = request.headers["Idempotency-Key"] else {
            if route.idempotency == .required {
                throw HubErrorReply(status: 400, code: "idempotency_key_required",
                                    message: "This endpoint needs an Idempotency-Key header (1–255 characters).")
            }
            return .none
        }
        guard (1...255).contains(key.count) else {
            throw HubErrorReply.invalidRequest("Idempotency-Key must be 1–255 characters.")
        }
        let fingerprint = HubEngine.fingerprint(request)
        if let replay = try idempotencyLookup(caller: caller.principal, key: key, fingerprint: fingerprint, now: ctx.now) {
            return .replay(replay)
        }
        return .reserve((caller.principal, key, fingerprint))
    }

    /// The route's own bucket (grants, notification sends), per caller. Its outcome
    /// replaces `rate`: a classed request's `RateLimit-*` headers describe its class's
    /// bucket, so a client can pace each class (docs/hub-api.md, "Rate limits").
    private func takeRouteBucket(_ route: Route, _ ctx: RequestContext, _ rate: inout RateLimiter.Outcome?, now: Double) throws {
        guard let extra = route.extraBucket, let caller = ctx.caller else { return }
        let o = limiter.take(extra.name + ":" + caller.bucketKey, capacity: extra.capacity, window: extra.window, now: now)
        rate = o
        if !o.allowed { throw HubErrorReply.rateLimited(retryAfter: o.retryAfter) }
    }

    private func execute(_ p: Prepared) -> Reply {
        let isWrite = p.route.method != "GET"
        var reply: Reply
        do {
            if isWrite {
                reply = try db.transaction {
                    let r = try p.route.handler(self)(p.ctx)
                    if let i = p.idempotency { try idempotencyStore(caller: i.caller, key: i.key, reply: r, now: p.ctx.now) }
                    return r
                }
                return reply
            }
            return try p.route.handler(self)(p.ctx)
        } catch let e as HubErrorReply {
            reply = e.reply
        } catch {
            reply = HubErrorReply.internalError("\(error)").reply
        }
        if let i = p.idempotency {
            if reply.status >= 500 || reply.status == 429 {
                try? idempotencyRelease(caller: i.caller, key: i.key)
            } else {
                try? idempotencyStore(caller: i.caller, key: i.key, reply: reply, now: p.ctx.now)
            }
        }
        return reply
    }

    private func finish(_ reply: Reply, requestId: String, rate: RateLimiter.Outcome?, dropped: Bool) -> HTTPResponseMessage {
        var headers = HTTPHeaders()
        if reply.body != nil { headers.add("Content-Type", "application/json") }
        for (n, v) in reply.headers { headers.add(n, v) }
        headers.add("X-Request-Id", requestId)
        // Rate limits off: no bucket, so no RateLimit-* headers (a client would pace under them).
        if limiter.enforced {
            let r = rate ?? RateLimiter.Outcome(allowed: true, limit: 100, remaining: 100, reset: 0, retryAfter: 0)
            headers.add("RateLimit-Limit", String(r.limit))
            headers.add("RateLimit-Remaining", String(r.remaining))
            headers.add("RateLimit-Reset", String(r.reset))
        }
        return HTTPResponseMessage(status: reply.status, headers: headers, body: reply.body?.data ?? Data(), dropped: dropped)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}

extension Route {
    /// `GET /health`: no version header, no authentication, no faults, no keys.
    var isHealth: Bool { segments == ["health"] }

    /// The anonymous bucket of an unauthenticated route: health probes, sign-ins (login
    /// and MFA) and token refreshes each have their own 100 a minute, so probing
    /// `/health` never locks out a login.
    var anonymousBucket: String {
        if isHealth { return "health" }
        return segments == ["auth", "token", "refresh"] ? "refresh" : "login"
    }
}
