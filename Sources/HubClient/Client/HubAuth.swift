import Foundation

/// Signing in and out of a user session; the CLI's `login` and `logout` call these.
///
/// The client must have been made with a `.session` credential: the refresh token goes
/// to its credential store, the access token stays in the client's memory.
public struct HubAuth: Sendable {
    public let client: HubClient

    /// What `logout` achieved.
    public struct LogoutResult: Sendable, Equatable {
        /// True when the Hub confirmed the session(s) revoked.
        public var serverConfirmed: Bool
        /// Why the Hub did not confirm (unreachable, session already ended, …).
        public var serverError: HubError?
    }

    public init(client: HubClient) {
        self.client = client
    }

    /// Signs in with `POST /auth/login`; when the account uses MFA, verifies `mfaCode`
    /// with `POST /auth/mfa/verify`. Persists the refresh token before the session is
    /// used. Throws `mfa_required` when MFA is needed and no code was given.
    public func login(email: String, password: String, mfaCode: String? = nil) throws {
        let session = try requireSession()
        var signIn = HubRequest(.post, "/auth/login", body: ["email": .string(email), "password": .string(password)], authenticated: false)
        signIn.carriedSecrets = [password]
        var answer = try client.send(signIn)
        if answer.json["mfa_required"]?.boolValue == true {
            guard let mfaToken = answer.json["mfa_token"]?.stringValue else {
                throw HubError(code: HubError.Code.invalidResponse, message: "MFA is required but no mfa_token came back",
                               status: answer.status, requestID: answer.requestID)
            }
            guard let mfaCode else {
                throw HubError(code: HubError.Code.mfaRequired, message: "The account \(email) uses multi-factor authentication",
                               requestID: answer.requestID)
            }
            answer = try client.send(HubRequest(.post, "/auth/mfa/verify", body: ["mfa_token": .string(mfaToken), "code": .string(mfaCode)],
                                                authenticated: false))
        }
        try session.install(IssuedTokens(answer.json, requestID: answer.requestID), email: email)
        client.invalidateCapabilities()
    }

    /// Signs out: `POST /auth/logout {all_sessions}`, then wipes the stored session
    /// whatever the Hub answered. Throws only when the local wipe fails.
    @discardableResult
    public func logout(allSessions: Bool = false) throws -> LogoutResult {
        let session = try requireSession()
        var result = LogoutResult(serverConfirmed: false, serverError: nil)
        do {
            _ = try client.post("/auth/logout", body: ["all_sessions": .bool(allSessions)])
            result.serverConfirmed = true
        } catch let error as HubError {
            result.serverError = error
        }
        try session.store.wipe(profile: session.profile)
        session.end(reason: "logged out")
        client.invalidateCapabilities()
        return result
    }

    private func requireSession() throws -> SessionManager {
        guard let session = client.session else {
            throw HubError(code: HubError.Code.configuration, message: "login and logout need a profile with session auth, not an API key",
                           hint: "Set auth to a session (email) in the profile, or use the API key directly.")
        }
        return session
    }
}
