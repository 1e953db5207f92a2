import Foundation
import HubClient
import RunJournal
import Synchronization

/// A Hub user signed in to the console: who they are, what their session may do, and
/// the client that holds their session (in memory only: its refresh token is never
/// written to disk).
public struct SignedInPerson: Sendable {
    public let email: String
    public let userID: String?
    public let client: HubClient
}

/// One browser's visit: made when the access token is presented, kept by a cookie.
public struct ConsoleSession: Sendable {
    /// The cookie's value (never logged).
    public let id: String
    /// The token each form of this session carries (`csrf` field).
    public let csrf: String
    public var person: SignedInPerson?
    var lastSeen: Date
}

/// The console's sessions, kept in memory (a restart signs everyone out).
///
/// Contracts: at most `capacity` sessions (the least recently seen goes first); one
/// unseen for `idleLimit` seconds is gone. Sessions are found by the SHA-256 of their
/// id, so a lookup's time says nothing about the ids held. Thread-safe.
public final class ConsoleSessions: Sendable {
    public let capacity: Int
    public let idleLimit: TimeInterval
    /// The open sessions by the SHA-256 of their id.
    private let byDigest = Mutex<[String: ConsoleSession]>([:])
    private let clock: @Sendable () -> Date

    public init(capacity: Int = 256, idleLimit: TimeInterval = 12 * 3600, clock: @escaping @Sendable () -> Date = { Date() }) {
        self.capacity = max(1, capacity)
        self.idleLimit = idleLimit
        self.clock = clock
    }

    /// A new session (signed out).
    public func open() -> ConsoleSession {
        let session = ConsoleSession(id: AccessToken.make(), csrf: AccessToken.make(), person: nil, lastSeen: clock())
        store(session)
        return session
    }

    /// The session whose cookie value is `id`, if it is still open; marks it seen.
    public func find(_ id: String) -> ConsoleSession? {
        guard id.utf8.count == 64 else { return nil }
        let key = Digest.sha256Hex(id)
        let now = clock()
        return byDigest.withLock { byDigest in
            guard var session = byDigest[key] else { return nil }
            guard now.timeIntervalSince(session.lastSeen) < idleLimit else {
                byDigest[key] = nil
                return nil
            }
            session.lastSeen = now
            byDigest[key] = session
            return session
        }
    }

    /// Replaces `old` by a new session (new id and CSRF token) for `person`: signing in
    /// or out never keeps an id a page could have seen before.
    public func renew(_ old: ConsoleSession, person: SignedInPerson?) -> ConsoleSession {
        close(old)
        var session = ConsoleSession(id: AccessToken.make(), csrf: AccessToken.make(), person: person, lastSeen: clock())
        session.person = person
        store(session)
        return session
    }

    public func close(_ session: ConsoleSession) {
        let key = Digest.sha256Hex(session.id)
        _ = byDigest.withLock { $0.removeValue(forKey: key) }
    }

    public var count: Int { byDigest.withLock { $0.count } }

    private func store(_ session: ConsoleSession) {
        let key = Digest.sha256Hex(session.id)
        byDigest.withLock { byDigest in
            byDigest[key] = session
            while byDigest.count > capacity, let oldest = byDigest.min(by: { $0.value.lastSeen < $1.value.lastSeen }) {
                byDigest[oldest.key] = nil
            }
        }
    }
}
