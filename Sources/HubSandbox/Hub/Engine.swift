import SQLiteKit
import Foundation
import HTTPKit

/// One entry of the Hub's route table.
struct Route {
    enum Auth { case none, required }
    enum Idempotency { case ignored, accepted, required }

    let method: String
    let segments: [String]
    let auth: Auth
    let idempotency: Idempotency
    /// An extra token bucket (name, capacity, window seconds) on top of the per-caller one.
    let extraBucket: (name: String, capacity: Int, window: Double)?
    let handler: (HubEngine) -> (RequestContext) throws -> Reply

    init(_ method: String, _ pattern: String, auth: Auth = .required, idempotency: Idempotency? = nil,
         bucket: (String, Int, Double)? = nil, _ handler: @escaping (HubEngine) -> (RequestContext) throws -> Reply) {
        self.method = method
        self.segments = pattern.split(separator: "/").map(String.init)
        self.auth = auth
        self.idempotency = idempotency ?? (method == "POST" ? .accepted : .ignored)
        self.extraBucket = bucket.map { (name: $0.0, capacity: $0.1, window: $0.2) }
        self.handler = handler
    }

    /// The path parameters when `parts` matches this pattern (`:x` matches one segment).
    func match(_ parts: [Substring]) -> [String]? {
        guard parts.count == segments.count else { return nil }
        var params: [String] = []
        for (seg, part) in zip(segments, parts) {
            if seg.hasPrefix(":") { params.append(String(part)) } else if seg != part { return nil }
        }
        return params
    }
}

/// The Hub emulation: state, routes and handlers. Every method runs under `lock`
/// (the pipeline takes it); handlers live in extensions by resource.
final class HubEngine {
    let db: SQLiteDatabase
    let options: SandboxOptions
    let limiter: RateLimiter
    var faultRNG: SplitMix64
    /// An NSLock, not a Mutex: the pipeline and the webhook deliverer hold it around
    /// whole requests over the engine's many fields and its connection.
    let lock = NSLock()
    var routes: [Route] = []
    /// Parsed permission lists by their stored text (see `permissions(_:)`).
    var permissionCache: [String: Set<String>] = [:]
    /// Test hook: runs (outside the lock) after an idempotency key was reserved and
    /// before the request executes, to hold a request "in flight".
    var afterReservation: (@Sendable (String) -> Void)?

    init(options: SandboxOptions) throws {
        self.options = options
        self.limiter = RateLimiter(enforced: options.rateLimits == .standard)
        self.faultRNG = SplitMix64(seed: options.faults.seed)
        switch options.storage {
        case .memory: db = try .sandboxStore(path: ":memory:")
        case .file(let url): db = try .sandboxStore(path: url.path)
        }
        try db.exec(Schema.sql)
        try db.exec(HubEngine.webhookSchema)
        try db.exec(HubEngine.adminSchema)
        var seeder = Seeder(db: db, seed: options.seed, now: nowSeconds, scale: options.scale)
        try seeder.run(onlyIfEmpty: true)
        routes = HubEngine.routeTable()
    }

    /// The clock's now in whole seconds.
    var nowSeconds: Int { Int(options.clock.now().timeIntervalSince1970.rounded(.down)) }

    /// Wipes every table and seeds again.
    func reset(seed: Int) throws {
        try db.transaction {
            for t in Schema.tables { try db.run("DELETE FROM \(t)") }
        }
        limiter.clear()
        faultRNG = SplitMix64(seed: options.faults.seed)
        try self.seed(seed)
    }

    func seed(_ seed: Int) throws {
        var seeder = Seeder(db: db, seed: seed, now: nowSeconds, scale: options.scale)
        try seeder.run()
    }

    /// A fresh opaque id with `prefix` (`ent_`, `evt_`…): 20 random base-32 characters.
    func newId(_ prefix: String) -> String { prefix + HubEngine.randomToken(20) }

    /// `count` random characters of a 32-letter alphabet (5 bits each).
    static func randomToken(_ count: Int) -> String {
        let alphabet: StaticString = "abcdefghijkmnpqrstuvwxyz23456789"
        var rng = SystemRandomNumberGenerator()
        return String(unsafeUninitializedCapacity: count) { out in
            let letters = alphabet.utf8Start
            var bits: UInt64 = 0, left = 0
            for i in 0..<count {
                if left < 5 { bits = rng.next(); left = 64 }
                out[i] = letters[Int(bits & 31)]
                bits >>= 5
                left -= 5
            }
            return count
        }
    }

    /// The route table; see docs/hub-api.md "Endpoints".
    static func routeTable() -> [Route] {
        [
            Route("GET", "health", auth: .none, HubEngine.health),
            Route("POST", "auth/login", auth: .none, HubEngine.login),
            Route("POST", "auth/mfa/verify", auth: .none, HubEngine.mfaVerify),
            Route("POST", "auth/token/refresh", auth: .none, HubEngine.refresh),
            Route("POST", "auth/logout", HubEngine.logout),
            Route("GET", "users", HubEngine.listUsers),
            Route("POST", "users", bucket: ("user_creation", 20, 60), HubEngine.createUser),
            Route("GET", "users/me/notifications", HubEngine.inbox),
            Route("PATCH", "users/me/notifications/:id", HubEngine.markNotification),
            Route("GET", "users/:id", HubEngine.getUser),
            Route("DELETE", "users/:id", HubEngine.deleteUser),
            Route("POST", "users/:id/invitation", HubEngine.resendInvitation),
            Route("GET", "users/:id/export", HubEngine.exportUser),
            Route("GET", "users/:id/apps/:app/effective-permissions", HubEngine.effectivePermissions),
            Route("PATCH", "users/:id", HubEngine.patchUser),
            Route("POST", "users/:id/suspend", HubEngine.suspendUser),
            Route("POST", "users/:id/reactivate", HubEngine.reactivateUser),
            Route("GET", "users/:id/roles", HubEngine.userRoles),
            Route("POST", "users/:id/roles/:role", HubEngine.assignRole),
            Route("DELETE", "users/:id/roles/:role", HubEngine.removeRole),
            Route("GET", "roles", HubEngine.listRoles),
            Route("POST", "roles", HubEngine.createRole),
            Route("GET", "roles/:id", HubEngine.getRole),
            Route("PATCH", "roles/:id", HubEngine.patchRole),
            Route("DELETE", "roles/:id", HubEngine.deleteRole),
            Route("GET", "permissions", HubEngine.listPermissions),
            Route("GET", "users/:id/entitlements", HubEngine.userEntitlements),
            Route("POST", "users/:id/entitlements", idempotency: .required, bucket: ("grant", 20, 60), HubEngine.grant),
            Route("GET", "entitlements", HubEngine.listEntitlements),
            Route("GET", "entitlements/:id", HubEngine.getEntitlement),
            Route("PATCH", "entitlements/:id", HubEngine.patchEntitlement),
            Route("GET", "users/:id/sessions", HubEngine.userSessions),
            Route("DELETE", "users/:id/sessions/:sid", HubEngine.revokeSession),
            Route("GET", "api-keys", HubEngine.listApiKeys),
            Route("POST", "api-keys", HubEngine.createApiKey),
            Route("PATCH", "api-keys/:id", HubEngine.patchApiKey),
            Route("POST", "api-keys/:id/rotate", HubEngine.rotateApiKey),
            Route("GET", "api-keys/:id", HubEngine.getApiKey),
            Route("DELETE", "api-keys/:id", HubEngine.revokeApiKey),
            Route("GET", "organizations", HubEngine.listOrganizations),
            Route("GET", "organizations/:id/members", HubEngine.orgMembers),
            Route("DELETE", "organizations/:id/members/:uid", HubEngine.removeOrgMember),
            Route("POST", "organizations/:id/entitlements", idempotency: .required, bucket: ("grant", 20, 60), HubEngine.grantToOrganization),
            Route("GET", "applications", HubEngine.listApplications),
            Route("GET", "audit-events", HubEngine.listAuditEvents),
            Route("GET", "audit-events/:id", HubEngine.getAuditEvent),
            Route("POST", "applications/:id/notifications", HubEngine.sendNotification),
            Route("GET", "webhooks", HubEngine.listWebhooks),
            Route("POST", "webhooks", HubEngine.createWebhook),
            Route("GET", "webhooks/:id", HubEngine.getWebhook),
            Route("PATCH", "webhooks/:id", HubEngine.patchWebhook),
            Route("DELETE", "webhooks/:id", HubEngine.deleteWebhook),
            Route("POST", "webhooks/:id/rotate-secret", HubEngine.rotateWebhookSecret),
            Route("POST", "webhooks/:id/test", HubEngine.testWebhook),
            Route("GET", "webhooks/:id/deliveries", HubEngine.listWebhookDeliveries),
            Route("POST", "webhooks/:id/deliveries/:did/redeliver", HubEngine.redeliverWebhook),
        ]
    }

    func health(_ c: RequestContext) throws -> Reply { .json(200, .object([("status", .string("ok"))])) }
}
