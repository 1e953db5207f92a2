import Foundation
import HTTPKit

/// The request pipeline around the handlers:
///
/// 1. (locked) route, `Substratal-Version`, authentication, the per-caller bucket, faults
///    that fail before any change (500/503), idempotency lookup (replay, reused, in flight),
///    the route's extra bucket, then the idempotency reservation;
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
        }
        return finish(reply, requestId: requestId, rate: rate, dropped: dropped)
    }

    private func prepare(_ request: HTTPRequestMessage, _ ctx: RequestContext, _ rate: inout RateLimiter.Outcome?) -> Phase1 {
        do {
            var path = Substring(request.path)
            var segments = request.pathSegments[...]
            if let prefix = options.apiPrefix, !prefix.isEmpty, path == prefix || path.hasPrefix(prefix + "/") {
                path = path.dropFirst(prefix.count)
                segments = segments.dropFirst(prefix.split(separator: "/").count)
            }
            // Segments are split before decoding: an id holding an encoded `/` stays one segment.
            let parts = segments.map { Substring($0) }
            var methodMismatch = false
            var found: Route?
            for r in routes {
                guard let params = r.match(parts) else { continue }
                if r.method == request.method { found = r; ctx.params = params; break }
                methodMismatch = true
            }
            guard let route = found else {
                if methodMismatch {
                    throw HubError(status: 405, code: "method_not_allowed", message: "\(request.method) is not allowed on \(path).")
                }
                throw HubError(status: 404, code: "not_found", message: "No endpoint \(request.method) \(path).")
            }
            let isHealth = route.segments == ["health"]
            if !isHealth, request.headers["Substratal-Version"] != "1" {
                throw HubError(status: 400, code: "unsupported_api_version",
                               message: "Send the header Substratal-Version: 1; this sandbox speaks API version 1 only.",
                               details: [("supported_versions", .array([.string("1")]))])
            }
            if request.body.count > 1_048_576 {
                throw HubError(status: 413, code: "payload_too_large", message: "The body exceeds 1 MiB.")
            }
            if route.auth == .required { ctx.caller = try authenticate(request, now: ctx.now) }
            if request.method == "POST" || request.method == "PATCH" { _ = try ctx.body() }
            let nowD = options.clock.now().timeIntervalSince1970
            let bucket = ctx.caller?.bucketKey ?? "anonymous"
            rate = limiter.take("all:" + bucket, capacity: 100, window: 60, now: nowD)
            if let r = rate, !r.allowed { throw HubError.rateLimited(retryAfter: r.retryAfter) }
            if isHealth { return .proceed(Prepared(route: route, ctx: ctx, idempotency: nil, lost: false)) }

            var lost = false
            let f = options.faults
            if !f.isNone {
                let u = faultRNG.unit()
                if u < f.errorRate { throw HubError.internalError("Injected fault: internal error (nothing was changed).") }
                if u < f.errorRate + f.unavailableRate {
                    throw HubError(status: 503, code: "service_unavailable",
                                   message: "Injected fault: service unavailable (nothing was changed).",
                                   headers: [("Retry-After", String(f.retryAfterSeconds))])
                }
                lost = f.lostRate > 0 && faultRNG.unit() < f.lostRate
            }

            var idem: (String, String, String)?
            if route.idempotency != .ignored, let caller = ctx.caller {
                if let key = request.headers["Idempotency-Key"] {
                    guard (1...255).contains(key.count) else {
                        throw HubError.invalidRequest("Idempotency-Key must be 1–255 characters.")
                    }
                    let fp = HubEngine.fingerprint(request)
                    if let replay = try idempotencyLookup(caller: caller.principal, key: key, fingerprint: fp, now: ctx.now) {
                        return .done(replay)
                    }
                    idem = (caller.principal, key, fp)
                } else if route.idempotency == .required {
                    throw HubError(status: 400, code: "idempotency_key_required",
                                   message: "This endpoint needs an Idempotency-Key header (1–255 characters).")
                }
            }
            if let extra = route.extraBucket, let caller = ctx.caller {
                let o = limiter.take(extra.name + ":" + caller.bucketKey, capacity: extra.capacity, window: extra.window, now: nowD)
                if !o.allowed { rate = o; throw HubError.rateLimited(retryAfter: o.retryAfter) }
            }
            if let idem { try idempotencyReserve(caller: idem.0, key: idem.1, fingerprint: idem.2, now: ctx.now) }
            return .proceed(Prepared(route: route, ctx: ctx, idempotency: idem, lost: lost))
        } catch let e as HubError {
            return .done(e.reply)
        } catch {
            return .done(HubError.internalError("\(error)").reply)
        }
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
        } catch let e as HubError {
            reply = e.reply
        } catch {
            reply = HubError.internalError("\(error)").reply
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
        let r = rate ?? RateLimiter.Outcome(allowed: true, limit: 100, remaining: 100, reset: 0, retryAfter: 0)
        headers.add("RateLimit-Limit", String(r.limit))
        headers.add("RateLimit-Remaining", String(r.remaining))
        headers.add("RateLimit-Reset", String(r.reset))
        return HTTPResponseMessage(status: reply.status, headers: headers, body: reply.body?.data ?? Data(), dropped: dropped)
    }
}

extension Duration {
    var seconds: Double { Double(components.seconds) + Double(components.attoseconds) / 1e18 }
}
