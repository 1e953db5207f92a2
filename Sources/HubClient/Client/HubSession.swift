import Foundation

/// How the client authenticates.
public enum HubCredential: Sendable {
    /// An API key secret (`satk_live_…`), sent as the bearer token.
    case apiKey(String)
    /// A user session: the refresh token comes from `store` under `profile`; access
    /// tokens are obtained by refresh (or `HubAuth.login`) and kept in memory.
    case session(profile: String, store: any CredentialStore)
    /// No credential: only unauthenticated endpoints (`/health`, `/auth/login`) work.
    case none
}

/// New tokens from `/auth/login`, `/auth/mfa/verify` or `/auth/token/refresh`.
struct IssuedTokens: Sendable {
    var accessToken: String
    var refreshToken: String
    var expiresIn: TimeInterval

    init(_ json: HubJSON, requestID: String) throws {
        guard let access = json["access_token"]?.stringValue, let refresh = json["refresh_token"]?.stringValue else {
            throw HubError(code: HubError.Code.invalidResponse, message: "The token response lacks access_token or refresh_token",
                           status: 200, requestID: requestID)
        }
        accessToken = access
        refreshToken = refresh
        expiresIn = json["expires_in"]?.doubleValue ?? 900
    }
}

/// The access token of a user session and the single-flight refresh around it.
///
/// Contract: at most one refresh runs at a time per client. A caller that needs a token
/// while a refresh runs waits for it and uses its result. The rotated refresh token is
/// saved to the store before the new access token is handed to anyone. A refresh that
/// answers 401, `refresh_token_reused` or `session_revoked` wipes the stored session
/// and every later call fails with `session_ended`.
final class SessionManager: @unchecked Sendable {
    typealias Refresher = (_ refreshToken: String) throws -> IssuedTokens

    /// Refresh this many seconds before the access token expires.
    static let proactiveMargin: TimeInterval = 60

    let profile: String
    let store: any CredentialStore
    private let clock: any HubClock
    private let condition = NSCondition()
    // Guarded by `condition`.
    private var accessToken: String?
    private var expiresAt: TimeInterval = 0
    private var generation = 0
    private var refreshEpoch = 0
    private var refreshing = false
    private var endedReason: String?
    private var lastRefreshError: Error?

    init(profile: String, store: any CredentialStore, clock: any HubClock) {
        self.profile = profile
        self.store = store
        self.clock = clock
    }

    /// A valid access token and its generation, refreshing first if there is none or it
    /// expires within `proactiveMargin`.
    func token(refresh: Refresher) throws -> (token: String, generation: Int) {
        try obtain(refresh: refresh) { token, _ in token != nil && self.clock.now() < self.expiresAt - Self.proactiveMargin }
    }

    /// A token newer than `generation` (the one a request was rejected with): waits for
    /// a running refresh, reuses one that finished meanwhile, or refreshes.
    func token(after generation: Int, refresh: Refresher) throws -> (token: String, generation: Int) {
        try obtain(refresh: refresh) { token, current in token != nil && current > generation }
    }

    /// Installs tokens from a login: saves the refresh token, then keeps the access token.
    func install(_ tokens: IssuedTokens, email: String?) throws {
        try store.save(StoredSession(refreshToken: tokens.refreshToken, email: email), profile: profile)
        condition.lock()
        accessToken = tokens.accessToken
        expiresAt = clock.now() + tokens.expiresIn
        generation += 1
        endedReason = nil
        condition.unlock()
    }

    /// Forgets the session: wipes the store and fails later calls with `session_ended`.
    func end(reason: String) {
        try? store.wipe(profile: profile)
        condition.lock()
        accessToken = nil
        endedReason = reason
        condition.broadcast()
        condition.unlock()
    }

    /// The `session_ended` error for this profile.
    func endedError(_ reason: String, requestID: String? = nil) -> HubError {
        HubError(code: HubError.Code.sessionEnded, message: "The session of profile \(profile) ended: \(reason)",
                 status: 401, requestID: requestID,
                 hint: "Run `hubscript login --profile \(profile)` to sign in again.")
    }

    private func obtain(refresh: Refresher, isUsable: (String?, Int) -> Bool) throws -> (token: String, generation: Int) {
        condition.lock()
        let startEpoch = refreshEpoch
        while true {
            if let endedReason {
                condition.unlock()
                throw endedError(endedReason)
            }
            if isUsable(accessToken, generation), let accessToken {
                let result = (accessToken, generation)
                condition.unlock()
                return result
            }
            if refreshing {
                condition.wait()
                continue
            }
            if refreshEpoch != startEpoch, let lastRefreshError {
                // A refresh we waited for failed; don't repeat it with the same token.
                condition.unlock()
                throw lastRefreshError
            }
            refreshing = true
            condition.unlock()
            return try runRefresh(refresh)
        }
    }

    /// Runs one refresh; called with `refreshing` set and the lock released.
    private func runRefresh(_ refresh: Refresher) throws -> (token: String, generation: Int) {
        do {
            guard let stored = try store.load(profile: profile) else {
                throw endedError("no stored session")
            }
            let tokens = try refresh(stored.refreshToken)
            try store.save(StoredSession(refreshToken: tokens.refreshToken, email: stored.email), profile: profile)
            condition.lock()
            accessToken = tokens.accessToken
            expiresAt = clock.now() + tokens.expiresIn
            generation += 1
            refreshEpoch += 1
            refreshing = false
            lastRefreshError = nil
            let result = (tokens.accessToken, generation)
            condition.broadcast()
            condition.unlock()
            return result
        } catch {
            var failure = error
            if let hubError = error as? HubError, Self.endsSession(hubError) {
                try? store.wipe(profile: profile)
                let reason = hubError.code == HubError.Code.sessionEnded
                    ? "no stored session" : "the refresh was refused (\(hubError.code))"
                failure = endedError(reason, requestID: hubError.requestID)
                condition.lock()
                endedReason = reason
                accessToken = nil
            } else {
                condition.lock()
            }
            refreshEpoch += 1
            refreshing = false
            lastRefreshError = failure
            condition.broadcast()
            condition.unlock()
            throw failure
        }
    }

    /// Whether a refresh failure (or any response) means the session is gone.
    static func endsSession(_ error: HubError) -> Bool {
        error.code == HubError.Code.sessionEnded || error.code == HubError.Code.refreshTokenReused
            || error.code == HubError.Code.sessionRevoked || error.status == 401
    }
}
