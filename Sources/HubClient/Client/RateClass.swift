import Foundation
import HTTPKit

/// The Hub's rate-limit classes beyond the per-caller bucket (docs/hub-api.md, "Rate
/// limits"): entitlement grants and user creation at 20 a minute, token refresh at 30,
/// notification sends at 600 a minute per key. Every authenticated request also counts
/// against the caller's bucket (`rateLimitPerMinute`); a refresh is anonymous, so only its
/// class paces it.
public enum RateClass: String, Sendable, CaseIterable {
    case grant, userCreation = "user_creation", refresh, notificationSend = "notification_send"

    /// The class's documented limit per minute.
    public var limitPerMinute: Int {
        switch self {
        case .grant, .userCreation: 20
        case .refresh: 30
        case .notificationSend: 600
        }
    }

    /// The class of a request (nil: only the caller's bucket). Paths are the client's,
    /// without its API prefix or query.
    public static func of(method: String, path: String) -> RateClass? {
        guard method == "POST" else { return nil }
        let parts = path.split(separator: "?", maxSplits: 1).first.map { $0.split(separator: "/") } ?? []
        switch parts.count {
        case 1 where parts[0] == "users": return .userCreation
        case 3 where (parts[0] == "users" || parts[0] == "organizations") && parts[2] == "entitlements": return .grant
        case 3 where parts == ["auth", "token", "refresh"]: return .refresh
        case 3 where parts[0] == "applications" && parts[2] == "notifications": return .notificationSend
        default: return nil
        }
    }
}

/// The governors of one client: the caller's bucket, and one per `RateClass`. With a
/// configured limit (the profile's `rate_limit_per_minute`), the caller's bucket paces
/// under it and each class under its documented limit, both lowered by what the Hub
/// reports; without one, every bucket paces under what the Hub reports in its
/// `RateLimit-*` headers, and nothing when it reports nothing; 0 turns all pacing
/// off. A request acquires its
/// class's slot, then the caller's (a refresh is anonymous: its class only); a 429 on
/// a classed request pauses that class only, so reads go on at full speed while grants
/// wait. Each governor learns from the `RateLimit-*` headers of its own requests: the
/// Hub reports a classed request's class bucket (docs/hub-api.md, "Rate limits").
final class RatePacer: Sendable {
    let session: RateGovernor
    /// One per class, in `RateClass.allCases` order (an array, not a dictionary keyed by
    /// the enum: instantiating that costs a protocol-conformance scan at start-up).
    private let classes: [RateGovernor]

    init(limitPerMinute: Int?, clock: any HubClock) {
        session = RateGovernor(limitPerMinute: limitPerMinute, clock: clock)
        classes = RateClass.allCases.map { rateClass in
            RateGovernor(limitPerMinute: limitPerMinute.map { $0 == 0 ? 0 : rateClass.limitPerMinute }, clock: clock)
        }
    }

    func governor(_ rateClass: RateClass?) -> RateGovernor? {
        guard let rateClass else { return nil }
        switch rateClass {
        case .grant: return classes[0]
        case .userCreation: return classes[1]
        case .refresh: return classes[2]
        case .notificationSend: return classes[3]
        }
    }

    /// Waits for a slot in `rateClass` (if any), then in the caller's bucket when the
    /// request counts against it (`authenticated`).
    func acquire(_ rateClass: RateClass?, authenticated: Bool = true,
                 beforeWaiting: (TimeInterval, HubClientEvent.WaitReason) -> Void) {
        governor(rateClass)?.acquire(beforeWaiting: beforeWaiting)
        if authenticated || rateClass == nil { session.acquire(beforeWaiting: beforeWaiting) }
    }

    /// The answer's `RateLimit-*` headers, to the governor of the bucket they describe:
    /// the request's class, or the caller's.
    func observe(_ rateClass: RateClass?, _ headers: HTTPHeaders) {
        (governor(rateClass) ?? session).observe(headers)
    }

    /// A 429's `Retry-After`: the request's class pauses, or every request when it has none.
    func pause(_ rateClass: RateClass?, for seconds: TimeInterval) {
        (governor(rateClass) ?? session).pause(for: seconds)
    }
}
