import Foundation
import HTTPKit
import HubSandbox
import Testing
@testable import HubClient

@Suite("Client against HubSandbox")
struct SandboxClientTests {
    @Test("admin logs in with MFA and holds every permission", arguments: TransportKind.allCases)
    func admin(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let store = InMemoryCredentialStore()
        let client = try h.sessionClient(SandboxFixtures.adminEmail, store: store)
        #expect(try store.load(profile: "sandbox")?.refreshToken.hasPrefix("srt_") == true)
        let caps = try client.capabilities()
        #expect(caps.source == .userSession)
        #expect(caps.permissions == Set(Capabilities.allPermissions))
        #expect(caps.roleCatalogVisible)
        #expect(caps.userID == SandboxFixtures.adminId)
        #expect(caps.adminOfOrgs.contains(SandboxFixtures.acmeOrgId))
        #expect(h.count("POST /auth/mfa/verify") == 1)
    }

    @Test("Ada (role_billing_admin) cannot read the role catalog; seed roles fill in", arguments: TransportKind.allCases)
    func ada(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let client = try h.sessionClient(SandboxFixtures.adaEmail)
        let caps = try client.capabilities()
        #expect(!caps.roleCatalogVisible)
        #expect(caps.permissions == ["billing.manage", "users.list"])
        #expect(caps.roleIDs.contains("role_billing_admin"))
        #expect(caps.organizations.contains(SandboxFixtures.acmeOrgId))
        // The server agrees: a suspend is refused and marks capabilities stale.
        let err = hubError { try client.post("/users/\(SandboxFixtures.supportId)/suspend", body: ["reason": "x"]) }
        #expect(err?.code == "forbidden")
        #expect(err?.details?["required_permission"] == "users.manage")
        #expect(client.capabilitiesAreStale)
    }

    @Test("API keys: a key named by id reads its own record; otherwise the declared list", arguments: TransportKind.allCases)
    func apiKeys(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let jobs = try h.jobsClient { $0.apiKeyID = SandboxFixtures.jobsKeyId }
        let jobsCaps = try jobs.capabilities()
        #expect(jobsCaps.source == .apiKeyRecord)
        #expect(jobsCaps.permissions == Set(Capabilities.allPermissions))
        let ops = try h.client(.apiKey(SandboxFixtures.opsKeySecret)) { $0.apiKeyID = SandboxFixtures.opsKeyId }
        let opsCaps = try ops.capabilities()
        #expect(opsCaps.source == .apiKeyRecord)
        #expect(opsCaps.permissions == Set(SandboxFixtures.opsKeyPermissions))
        #expect(!opsCaps.canManageBilling)
        let declared = try h.client(.apiKey(SandboxFixtures.supportKeySecret)) { $0.apiKeyPermissions = ["users.list", "audit.view"] }
        let declaredCaps = try declared.capabilities()
        #expect(declaredCaps.source == .apiKeyDeclared)
        #expect(declaredCaps.permissions == ["users.list", "audit.view"])
    }

    @Test("pagination walks every audit event, whatever the page size", arguments: TransportKind.allCases)
    func pagination(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let client = try h.jobsClient()
        let big = try client.paginate(path: "/audit-events", limit: 100).allItems().compactMap { $0["id"]?.stringValue }
        let small = try client.paginate(path: "/audit-events", limit: 37).allItems().compactMap { $0["id"]?.stringValue }
        #expect(big.count >= 3_000)
        #expect(Set(big).count == big.count)
        #expect(small == big)
        #expect(h.count("GET /audit-events") == (big.count + 99) / 100 + (big.count + 36) / 37)
        let filtered = try client.paginate(path: "/audit-events", query: [("target_user_id", SandboxFixtures.adaId)], limit: 5).allItems()
        #expect(!filtered.isEmpty)
        #expect(filtered.allSatisfy { $0["target_user_id"]?.stringValue == SandboxFixtures.adaId })
    }

    @Test("a stale ETag gets version_conflict; reapply merges and succeeds", arguments: TransportKind.allCases)
    func versionConflict(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let alice = try h.jobsClient()
        let bob = try h.jobsClient()
        let path = "/users/\(SandboxFixtures.adaId)"
        _ = try alice.get(path)
        _ = try bob.get(path)
        _ = try bob.patch(path, body: ["display_name": "Ada (Bob)"])
        let result = try alice.patch(path, body: ["display_name": "Ada (Alice)"]) { current in
            #expect(current.json["display_name"] == "Ada (Bob)")
            return ["display_name": "Ada (Alice after Bob)"]
        }
        #expect(result.json["display_name"] == "Ada (Alice after Bob)")
        #expect(h.count("PATCH \(path)") == 3)
        // Without reapply, the conflict surfaces with the current ETag.
        let err = hubError { try bob.patch(path, body: ["display_name": "again"]) }
        #expect(err?.code == "version_conflict")
    }

    @Test("role assignments carry the role set's ETag", arguments: TransportKind.allCases)
    func roleSet(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let client = try h.jobsClient()
        let roles = try client.get("/users/\(SandboxFixtures.supportId)/roles")
        let etag = try #require(roles.etag)
        _ = try client.post("/users/\(SandboxFixtures.supportId)/roles/role_billing_admin", body: [:])
        #expect(client.etag(for: "/users/\(SandboxFixtures.supportId)/roles") != etag)
        _ = try client.delete("/users/\(SandboxFixtures.supportId)/roles/role_billing_admin")
    }

    @Test("concurrent calls after the access token expired share one refresh", arguments: TransportKind.allCases)
    func singleFlight(kind: TransportKind) throws {
        let sandboxClock = ManualClock()
        let h = try SandboxHarness(kind, options: SandboxOptions(rateLimits: .off, clock: sandboxClock))
        let store = InMemoryCredentialStore()
        let client = try h.sessionClient(SandboxFixtures.supportEmail, store: store)
        let first = try #require(try store.load(profile: "sandbox")?.refreshToken)
        sandboxClock.advance(by: 16 * 60)
        let failures = ClientLock([Error]())
        onThreads(16) { _ in
            do { _ = try client.get("/users/me") } catch { failures.withLock { $0.append(error) } }
        }
        #expect(failures.withLock { $0.isEmpty })
        #expect(h.count("POST /auth/token/refresh") == 1)
        let rotated = try #require(try store.load(profile: "sandbox")?.refreshToken)
        #expect(rotated != first)
    }

    @Test("an idempotent grant sent twice is replayed, not repeated", arguments: TransportKind.allCases)
    func replay(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let client = try h.jobsClient()
        let body: HubJSON = ["application_id": "app_wiki", "source": "admin_grant"]
        let first = try client.post("/users/\(SandboxFixtures.supportId)/entitlements", body: body, idempotencyKey: "grant-support-wiki")
        let second = try client.post("/users/\(SandboxFixtures.supportId)/entitlements", body: body, idempotencyKey: "grant-support-wiki")
        #expect(!first.replayed && second.replayed)
        #expect(first.json["id"] == second.json["id"])
        let err = hubError { try client.post("/users/\(SandboxFixtures.supportId)/entitlements", body: body) }
        #expect(err?.code == "idempotency_key_required")
    }

    @Test("grants are paced under their own 20/min class while reads go on: no 429")
    func classPacing() throws {
        let sandboxClock = ManualClock()
        let h = try SandboxHarness(.inProcess, options: SandboxOptions(rateLimits: .standard, clock: sandboxClock))
        var options = HubClientOptions(rateLimitPerMinute: 100, clock: LinkedClock(sandboxClock: sandboxClock), random: FixedRandom())
        options.warn = { _ in }
        let client = try HubClient(baseURL: h.baseURL, credential: .apiKey(SandboxFixtures.jobsKeySecret), transport: h.transport,
                                   options: options)
        let users = try client.get("/users", query: [("status", "active"), ("limit", "100")]).json["data"]?.arrayValue?
            .compactMap { $0["id"]?.stringValue } ?? []
        #expect(users.count >= 45)
        let start = sandboxClock.now()
        for (n, user) in users.prefix(45).enumerated() {
            _ = try client.post("/users/\(user)/entitlements", body: ["application_id": "app_hub", "source": "admin_grant"], idempotencyKey: "pace-\(n)")
            _ = try client.get("/users/\(user)")   // a read between grants never waits for the grant class
        }
        #expect(h.count("429") == 0)
        // 20 grants from the full class bucket, then 25 at 3 s / 0.95.
        let elapsed = sandboxClock.now().timeIntervalSince(start)
        #expect(abs(elapsed - 25 * 3 / RateGovernor.safety) < 3, "elapsed \(elapsed)")
        #expect(RateClass.of(method: "POST", path: "/users/usr_1/entitlements") == .grant)
        #expect(RateClass.of(method: "POST", path: "/organizations/org_1/entitlements") == .grant)
        #expect(RateClass.of(method: "POST", path: "/users") == .userCreation)
        #expect(RateClass.of(method: "POST", path: "/auth/token/refresh") == .refresh)
        #expect(RateClass.of(method: "GET", path: "/users") == nil)
        #expect(RateClass.of(method: "POST", path: "/users/usr_1/suspend") == nil)
    }

    @Test("the governor paces 150 calls under the sandbox's 100/min without a 429", arguments: TransportKind.allCases)
    func pacing(kind: TransportKind) throws {
        let sandboxClock = ManualClock()
        let h = try SandboxHarness(kind, options: SandboxOptions(rateLimits: .standard, clock: sandboxClock))
        var options = HubClientOptions(rateLimitPerMinute: 100, clock: LinkedClock(sandboxClock: sandboxClock), random: FixedRandom())
        options.warn = { _ in }
        let client = try HubClient(baseURL: h.baseURL, credential: .apiKey(SandboxFixtures.jobsKeySecret), transport: h.transport,
                                   options: options)
        let start = sandboxClock.now()
        for _ in 0..<150 { _ = try client.get("/users/\(SandboxFixtures.adaId)") }
        #expect(h.count("429") == 0)
        // 100 from the full bucket, then 50 at 0.6 s / 0.95: about 31.6 s of sandbox time.
        let elapsed = sandboxClock.now().timeIntervalSince(start)
        #expect(abs(elapsed - 30 / RateGovernor.safety) < 0.5)

        // Without the governor the same burst runs into the Hub's limit, and 429's
        // Retry-After is honoured instead.
        options.rateLimitPerMinute = 0
        let unpaced = try HubClient(baseURL: h.baseURL, credential: .apiKey(SandboxFixtures.opsKeySecret), transport: h.transport,
                                    options: options)
        for _ in 0..<110 { _ = try unpaced.get("/users/\(SandboxFixtures.adaId)") }
        #expect(h.count("429") > 0)
    }
}
