import Foundation
import HTTPKit
@testable import HubClient

/// A scripted Hub that implements login, MFA, rotating refresh and bearer checks, and
/// records what the credential store held whenever an authorized request arrived.
final class FakeAuthHub: @unchecked Sendable {
    private let lock = NSLock()
    private var validTokens: Set<String> = []
    private var currentRefresh = "rt_0"
    private var issued = 0
    private var refreshesInFlight = 0
    private(set) var maxRefreshesInFlight = 0
    private(set) var refreshCalls = 0
    private(set) var unauthorizedAnswers = 0
    /// (access token used, refresh token in the store at that moment)
    private(set) var authorizedSeen: [(token: String, stored: String?)] = []
    var refreshDelay: TimeInterval = 0
    var mfa = false
    let store: any CredentialStore
    let profile: String

    init(store: any CredentialStore, profile: String = "test") {
        self.store = store
        self.profile = profile
    }

    /// Makes every access token issued so far invalid (as if they expired server-side).
    func expireAccessTokens() { lock.withLock { validTokens.removeAll() } }
    /// Revokes the whole session.
    func revoke() { lock.withLock { validTokens.removeAll(); currentRefresh = "revoked" } }

    private func issue() -> HTTPResponseMessage {
        let pair: (String, String) = lock.withLock {
            issued += 1
            validTokens.insert("at_\(issued)")
            currentRefresh = "rt_\(issued)"
            return ("at_\(issued)", "rt_\(issued)")
        }
        return jsonResponse(["access_token": .string(pair.0), "refresh_token": .string(pair.1), "expires_in": 900])
    }

    func handle(_ request: HTTPRequestMessage, _ index: Int) -> HTTPResponseMessage {
        let body = (try? HubJSON.parse(request.body)) ?? .null
        switch (request.method, request.path) {
        case ("POST", "/auth/login"):
            if mfa { return jsonResponse(["mfa_required": true, "mfa_token": "mfa_1"]) }
            return issue()
        case ("POST", "/auth/mfa/verify"):
            return body["code"] == "123456" && body["mfa_token"] == "mfa_1" ? issue() : errorResponse(401, "unauthenticated")
        case ("POST", "/auth/token/refresh"):
            let ok: Bool = lock.withLock {
                refreshCalls += 1
                refreshesInFlight += 1
                maxRefreshesInFlight = max(maxRefreshesInFlight, refreshesInFlight)
                return body["refresh_token"]?.stringValue == currentRefresh
            }
            if refreshDelay > 0 { Thread.sleep(forTimeInterval: refreshDelay) }
            defer { lock.withLock { refreshesInFlight -= 1 } }
            if !ok {
                lock.withLock { validTokens.removeAll(); currentRefresh = "revoked" }
                return errorResponse(401, "refresh_token_reused")
            }
            return issue()
        default:
            let token = request.headers["Authorization"].map { String($0.dropFirst("Bearer ".count)) } ?? ""
            let stored = (try? store.load(profile: profile))?.refreshToken
            let valid: Bool = lock.withLock {
                let valid = validTokens.contains(token)
                if valid { authorizedSeen.append((token, stored)) } else { unauthorizedAnswers += 1 }
                return valid
            }
            if request.path == "/auth/logout" {
                return valid ? emptyResponse(204) : errorResponse(401, "unauthenticated")
            }
            if lock.withLock({ currentRefresh == "revoked" }) { return errorResponse(401, "session_revoked") }
            return valid ? jsonResponse(["path": .string(request.path)]) : errorResponse(401, "unauthenticated")
        }
    }
}
