/// When the generated users last logged in: spread over the 18 months before the seed's
/// `now`, so the seeded Hub can demonstrate the admin tasks that look at activity
/// ("members inactive for 90 days").
///
/// Active users fall into cohorts: recently active (the last 30 days), lapsing (30 to 90
/// days ago), dormant (90 days to 18 months ago) and never logged in (`null`). Suspended
/// and deleted users logged in at some time before they were suspended; invited users
/// never did. A login is never before the user was created: a user too new for their
/// cohort is recently active instead.
///
/// The draws come from a generator of their own, seeded from the sandbox's seed, so the
/// rest of the generated data (ids, emails, statuses, entitlements, audit events) is the
/// same as it was before logins were spread out.
struct LoginHistory {
    enum Cohort: String, Equatable {
        case recent, lapsing, dormant, never
    }

    /// How far back the oldest seeded login is: 18 months.
    static let oldestDays = 548
    /// The share of active users in each cohort (the rest are recent).
    static let dormantShare = 0.25, lapsingShare = 0.15, neverShare = 0.10

    private var rng: SplitMix64
    private let now: Int
    private let day = 86_400

    init(seed: Int, now: Int) {
        rng = SplitMix64(seed: UInt64(bitPattern: Int64(seed)) &* 0xD1B5_4A32_D192_ED03 &+ 0x5EED_1061)
        self.now = now
    }

    private mutating func int(_ range: Range<Int>) -> Int { range.lowerBound + Int(rng.next() % UInt64(range.count)) }

    /// The last login of a generated user with `status`, created at `created`;
    /// `recent` is a login time in the last 30 days, used for the recent cohort.
    mutating func lastLogin(status: String, created: Int, recent: Int) -> (cohort: Cohort?, at: Int?) {
        let oldest = now - Self.oldestDays * day
        switch status {
        case "active":
            let r = rng.unit()
            let cohort: Cohort = r < Self.dormantShare ? .dormant
                : r < Self.dormantShare + Self.lapsingShare ? .lapsing
                : r < Self.dormantShare + Self.lapsingShare + Self.neverShare ? .never : .recent
            switch cohort {
            case .never:
                return (.never, nil)
            case .dormant where created < now - 91 * day:
                return (.dormant, int(max(created, oldest)..<(now - 90 * day)))
            case .lapsing where created < now - 31 * day:
                return (.lapsing, int(max(created, now - 90 * day)..<(now - 30 * day)))
            default:
                return (.recent, min(now - 60, max(recent, created + 60)))
            }
        case "suspended", "deleted":
            guard created < now - 2 * day else { return (nil, created + 60) }
            return (nil, int(max(created, oldest)..<(now - day)))
        default:
            return (nil, nil)
        }
    }
}
