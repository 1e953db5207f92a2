import Foundation
import HTTPKit
import Testing
@testable import HubClient

@Suite("User sessions")
struct SessionTests {
    static func harness(_ kind: TransportKind, store: any CredentialStore = InMemoryCredentialStore(),
                        configure: (FakeAuthHub) -> Void = { _ in }) throws -> (Harness, FakeAuthHub) {
        let auth = FakeAuthHub(store: store)
        configure(auth)
        let h = try Harness(kind, credential: .session(profile: "test", store: store)) { auth.handle($0, $1) }
        return (h, auth)
    }

    @Test("login stores the refresh token; calls use the access token", arguments: TransportKind.allCases)
    func login(kind: TransportKind) throws {
        let store = InMemoryCredentialStore()
        let (h, auth) = try Self.harness(kind, store: store)
        try HubAuth(client: h.client).login(email: "admin@example.com", password: "pw")
        #expect(try store.load(profile: "test")?.refreshToken == "rt_1")
        #expect(try store.load(profile: "test")?.email == "admin@example.com")
        _ = try h.client.get("/users/me")
        #expect(h.requests.last?.headers["Authorization"] == "Bearer at_1")
        #expect(auth.refreshCalls == 0)
        #expect(h.requests.first?.headers["Authorization"] == nil)
    }

    @Test("MFA: without a code login fails with mfa_required; with it, verify issues tokens", arguments: TransportKind.allCases)
    func mfa(kind: TransportKind) throws {
        let store = InMemoryCredentialStore()
        let (h, _) = try Self.harness(kind, store: store) { $0.mfa = true }
        let err = hubError { try HubAuth(client: h.client).login(email: "a@example.com", password: "pw") }
        #expect(err?.code == HubError.Code.mfaRequired)
        #expect(try store.load(profile: "test") == nil)
        try HubAuth(client: h.client).login(email: "a@example.com", password: "pw", mfaCode: "123456")
        #expect(try store.load(profile: "test")?.refreshToken == "rt_1")
        #expect(h.requests.map(\.path) == ["/auth/login", "/auth/login", "/auth/mfa/verify"])
    }

    @Test("a new process refreshes with the stored token first, and rotates it", arguments: TransportKind.allCases)
    func startFromStore(kind: TransportKind) throws {
        let store = InMemoryCredentialStore(["test": StoredSession(refreshToken: "rt_0")])
        let (h, auth) = try Self.harness(kind, store: store)
        #expect(try h.client.get("/users/me").json["path"] == "/users/me")
        #expect(auth.refreshCalls == 1)
        #expect(try store.load(profile: "test")?.refreshToken == "rt_1")
        #expect(auth.authorizedSeen.map(\.token) == ["at_1"])
    }

    @Test("concurrent 401s share one refresh, never two at once, and all replay", arguments: TransportKind.allCases)
    func singleFlight(kind: TransportKind) throws {
        let store = InMemoryCredentialStore()
        let (h, auth) = try Self.harness(kind, store: store) { $0.refreshDelay = 0.05 }
        try HubAuth(client: h.client).login(email: "a@example.com", password: "pw")
        _ = try h.client.get("/warm")
        auth.expireAccessTokens()
        let failures = ClientLock([Error]())
        DispatchQueue.concurrentPerform(iterations: 24) { i in
            do { _ = try h.client.get("/users/usr_\(i)") } catch { failures.withLock { $0.append(error) } }
        }
        #expect(failures.withLock { $0.isEmpty })
        #expect(auth.refreshCalls == 1)
        #expect(auth.maxRefreshesInFlight == 1)
        #expect(try store.load(profile: "test")?.refreshToken == "rt_2")
        #expect(auth.authorizedSeen.filter { $0.token == "at_2" }.count == 24)
    }

    @Test("the rotated refresh token is in the store before the new access token is used", arguments: TransportKind.allCases)
    func persistedBeforeUse(kind: TransportKind) throws {
        let store = InMemoryCredentialStore()
        let (h, auth) = try Self.harness(kind, store: store)
        try HubAuth(client: h.client).login(email: "a@example.com", password: "pw")
        for round in 0..<3 {
            auth.expireAccessTokens()
            _ = try h.client.get("/users/me/\(round)")
        }
        #expect(auth.refreshCalls == 3)
        for seen in auth.authorizedSeen {
            // at_N is always used with rt_N already stored.
            #expect(seen.stored == "rt_" + seen.token.dropFirst(3))
        }
        #expect(auth.authorizedSeen.count == 3)
    }

    @Test("refresh runs 60 s before expiry, without waiting for a 401", arguments: TransportKind.allCases)
    func proactive(kind: TransportKind) throws {
        let (h, auth) = try Self.harness(kind)
        try HubAuth(client: h.client).login(email: "a@example.com", password: "pw")
        h.clock.advance(900 - 61)
        _ = try h.client.get("/a")
        #expect(auth.refreshCalls == 0)
        h.clock.advance(2)
        _ = try h.client.get("/b")
        #expect(auth.refreshCalls == 1)
        #expect(auth.unauthorizedAnswers == 0)
        #expect(h.requests.last?.headers["Authorization"] == "Bearer at_2")
    }

    @Test("a refused refresh wipes the store and ends the session", arguments: TransportKind.allCases)
    func refreshRefused(kind: TransportKind) throws {
        let store = InMemoryCredentialStore(["test": StoredSession(refreshToken: "rt_stale")])
        let (h, _) = try Self.harness(kind, store: store)
        let err = hubError { try h.client.get("/users/me") }
        #expect(err?.code == HubError.Code.sessionEnded)
        #expect(err?.hint == "Run `hubscript login --profile test` to sign in again.")
        #expect(err?.message.contains("refresh_token_reused") == true)
        #expect(try store.load(profile: "test") == nil)
        let count = h.requests.count
        #expect(hubError { try h.client.get("/users/me") }?.code == HubError.Code.sessionEnded)
        #expect(h.requests.count == count)
    }

    @Test("session_revoked on a call ends the session", arguments: TransportKind.allCases)
    func revoked(kind: TransportKind) throws {
        let store = InMemoryCredentialStore()
        let (h, auth) = try Self.harness(kind, store: store)
        try HubAuth(client: h.client).login(email: "a@example.com", password: "pw")
        auth.revoke()
        let err = hubError { try h.client.get("/users/me") }
        #expect(err?.code == HubError.Code.sessionEnded)
        #expect(try store.load(profile: "test") == nil)
        #expect(auth.refreshCalls == 0)
    }

    @Test("no stored session ends at once with the login hint")
    func noSession() throws {
        let (h, _) = try Self.harness(.inProcess)
        let err = hubError { try h.client.get("/users/me") }
        #expect(err?.code == HubError.Code.sessionEnded)
        #expect(h.requests.isEmpty)
    }

    @Test("logout revokes on the server and wipes locally, even when the server fails", arguments: TransportKind.allCases)
    func logout(kind: TransportKind) throws {
        let store = InMemoryCredentialStore()
        let (h, _) = try Self.harness(kind, store: store)
        let auth = HubAuth(client: h.client)
        try auth.login(email: "a@example.com", password: "pw")
        let result = try auth.logout(allSessions: true)
        #expect(result.serverConfirmed)
        let logout = try #require(h.requests.last)
        #expect(logout.path == "/auth/logout")
        #expect(try HubJSON.parse(logout.body) == ["all_sessions": true])
        #expect(logout.headers["Authorization"] == "Bearer at_1")
        #expect(try store.load(profile: "test") == nil)
        #expect(hubError { try h.client.get("/users/me") }?.code == HubError.Code.sessionEnded)

        let failing = InMemoryCredentialStore(["test": StoredSession(refreshToken: "rt_x")])
        let down = try Harness(kind, credential: .session(profile: "test", store: failing)) { _, _ in errorResponse(500, "internal_error") }
        let downResult = try HubAuth(client: down.client).logout()
        #expect(!downResult.serverConfirmed)
        #expect(downResult.serverError != nil)
        #expect(try failing.load(profile: "test") == nil)
    }

    @Test("an API key client cannot log in")
    func apiKeyLogin() throws {
        let h = try Harness(.inProcess) { _, _ in jsonResponse([:]) }
        #expect(hubError { try HubAuth(client: h.client).login(email: "a", password: "b") }?.code == HubError.Code.configuration)
    }
}
