import Foundation
import HTTPKit

/// Who may read the console and who may change things through it.
///
/// Reading: the access token made at start, presented once as `?token=…` (the URL the
/// console prints), opens a session kept by an `HttpOnly; SameSite=Strict` cookie and
/// is then dropped from the address by a redirect. A request with neither a session
/// cookie nor the token is answered 401.
///
/// Changing (every POST): the form's `csrf` field must be the session's CSRF token, and
/// the request must come from the console's own pages — `Sec-Fetch-Site: same-origin`,
/// or an `Origin` whose host is the request's `Host` — else 403. Actions also need a
/// signed-in Hub user (`ConsoleSession.person`) holding the permissions they need.
public struct ConsoleAccess: Sendable {
    /// The token of the printed URL.
    public let token: String
    public let sessions: ConsoleSessions
    /// The cookie's name: one per port, since browsers share cookies across the ports of a host.
    public let cookieName: String
    /// Whether cookies are marked `Secure` (a console reached through a TLS proxy).
    public let secureCookies: Bool

    public init(token: String = AccessToken.make(), sessions: ConsoleSessions = ConsoleSessions(), port: UInt16,
                secureCookies: Bool = false) {
        self.token = token
        self.sessions = sessions
        self.cookieName = "hubscript_console_\(port)"
        self.secureCookies = secureCookies
    }

    /// What a request may do: go on with its session, or get this response instead.
    enum Admission {
        case admitted(ConsoleSession)
        case answer(HTTPResponseMessage)
    }

    /// The session of `request`, or the answer that replaces it (401, or the redirect
    /// that sets the cookie and drops the token from the address).
    func admit(_ request: HTTPRequestMessage, layout: Layout) -> Admission {
        let presented = request.queryItems.first { $0.name == "token" }?.value
        let session = cookie(in: request).flatMap { sessions.find($0) }
        if let presented {
            guard AccessToken.matches(presented, token) else { return .answer(unauthorized(layout)) }
            let opened = session ?? sessions.open()
            return .answer(ConsoleResponse.redirect(Self.withoutToken(request), cookie: setCookie(opened.id)))
        }
        guard let session else { return .answer(unauthorized(layout)) }
        return .admitted(session)
    }

    /// Why a POST must be refused (403), or nil when it may go on: its CSRF field and
    /// where it comes from.
    func refusal(of request: HTTPRequestMessage, form: [String: String], session: ConsoleSession) -> String? {
        let fetchSite = request.headers["Sec-Fetch-Site"]
        let origin = request.headers["Origin"]
        if let fetchSite, fetchSite != "same-origin" {
            return "the request came from another site (Sec-Fetch-Site: \(fetchSite)); use the console's own pages"
        }
        // `Origin: null` is what a browser sends for the console's own forms under its
        // `Referrer-Policy: no-referrer`: it says nothing either way, so Sec-Fetch-Site decides.
        if origin == "null" && fetchSite == nil {
            return "the request's origin is hidden (Origin: null) and it has no Sec-Fetch-Site; use the console's own pages in a current browser"
        }
        if let origin, origin != "null", !Self.origin(origin, matchesHost: request.headers["Host"]) {
            return "the request came from another origin (\(origin)); use the console's own pages"
        }
        if fetchSite == nil && origin == nil {
            return "the request says neither where it comes from (Origin) nor Sec-Fetch-Site; use the console's own pages in a browser"
        }
        guard let csrf = form["csrf"], AccessToken.matches(csrf, session.csrf) else {
            return "the form's CSRF token is missing or stale; reload the page and try again"
        }
        return nil
    }

    /// `Set-Cookie` for session `id`.
    func setCookie(_ id: String) -> String {
        "\(cookieName)=\(id); Path=/; HttpOnly; SameSite=Strict" + (secureCookies ? "; Secure" : "")
    }

    /// The session id the request's `Cookie` fields carry, if any.
    func cookie(in request: HTTPRequestMessage) -> String? {
        for field in request.headers.values("Cookie") {
            for pair in field.split(separator: ";") {
                let parts = pair.split(separator: "=", maxSplits: 1)
                if parts.count == 2, HTTPHeaders.trimmingWhitespace(String(parts[0])) == cookieName[...] {
                    return String(HTTPHeaders.trimmingWhitespace(String(parts[1])))
                }
            }
        }
        return nil
    }

    private func unauthorized(_ layout: Layout) -> HTTPResponseMessage {
        ConsoleResponse.problem(401, title: "Sign-in link needed", """
            This console needs the link it printed when it started (…/?token=…). Open that link; \
            if it is lost, restart hubscript console to get a new one.
            """, layout: layout)
    }

    /// The request's target without its `token` query item (the other items kept as written).
    static func withoutToken(_ request: HTTPRequestMessage) -> String {
        let target = request.target
        guard let mark = target.firstIndex(of: "?") else { return "/" }
        let path = String(target[..<mark])
        let kept = target[target.index(after: mark)...].split(separator: "&").filter {
            !($0 == "token" || $0.hasPrefix("token="))
        }
        // Only a path on the console: never `//host` or `/\host`, which a browser would leave for.
        let onConsole = path.hasPrefix("/") && !path.hasPrefix("//") && !path.contains("\\")
        let base = onConsole ? path : "/"
        return kept.isEmpty ? base : base + "?" + kept.joined(separator: "&")
    }

    /// Whether `origin` (`scheme://host[:port]`) names `host` (the `Host` field, `host[:port]`).
    static func origin(_ origin: String, matchesHost host: String?) -> Bool {
        guard let host, !host.isEmpty, let schemeEnd = origin.range(of: "://") else { return false }
        let scheme = origin[..<schemeEnd.lowerBound]
        guard scheme == "http" || scheme == "https" else { return false }
        return origin[schemeEnd.upperBound...].lowercased() == host.lowercased()
    }
}
