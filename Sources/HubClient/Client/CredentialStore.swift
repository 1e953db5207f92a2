import Foundation
import Synchronization
#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// What survives between runs of a user session: the rotating refresh token. The
/// access token lives in memory only (docs/hub-api.md, "Client rules").
public struct StoredSession: Sendable, Equatable {
    public var refreshToken: String
    /// The account, for messages only.
    public var email: String?
    public var savedAt: Date

    public init(refreshToken: String, email: String? = nil, savedAt: Date = Date()) {
        self.refreshToken = refreshToken
        self.email = email
        self.savedAt = savedAt
    }
}

/// Persists one `StoredSession` per profile.
///
/// Contract: `save` is atomic (a reader sees the old or the new session, never a mix)
/// and durable when it returns; the client calls it with a rotated refresh token
/// before it uses the access token that came with it. Implementations are thread-safe.
public protocol CredentialStore: Sendable {
    func load(profile: String) throws -> StoredSession?
    func save(_ session: StoredSession, profile: String) throws
    /// Removes the profile's session; removing a missing one is not an error.
    func wipe(profile: String) throws
}

/// Keeps sessions in memory; for tests and the embedded sandbox.
public final class InMemoryCredentialStore: CredentialStore, @unchecked Sendable {
    private let sessions = ClientLock([String: StoredSession]())

    public init(_ initial: [String: StoredSession] = [:]) {
        sessions.withLock { $0 = initial }
    }

    public func load(profile: String) throws -> StoredSession? { sessions.withLock { $0[profile] } }
    public func save(_ session: StoredSession, profile: String) throws { sessions.withLock { $0[profile] = session } }
    public func wipe(profile: String) throws { _ = sessions.withLock { $0.removeValue(forKey: profile) } }
}

/// Keeps each profile's session in `<directory>/<profile>.json`, mode 0600, in a
/// directory of mode 0700. Writes go to a temporary file in the same directory, are
/// flushed with `fsync`, then renamed over the old file.
public final class FileCredentialStore: CredentialStore, Sendable {
    public let directory: URL
    /// One load, save or wipe at a time in this process.
    private let fileAccess = Mutex(())

    /// `directory` is typically `<state dir>/credentials`; it is created on first save.
    public init(directory: URL) {
        self.directory = directory
    }

    public func fileURL(profile: String) -> URL {
        let safe = profile.map { $0.isLetter || $0.isNumber || $0 == "-" || $0 == "_" ? String($0) : "_" }.joined()
        return directory.appendingPathComponent(safe + ".json")
    }

    public func load(profile: String) throws -> StoredSession? {
        try fileAccess.withLock { _ in
            let url = fileURL(profile: profile)
            guard let data = FileManager.default.contents(atPath: url.path) else { return nil }
            return try StoredSession(storedJSON: data, source: "of profile \(profile) (\(url.path))")
        }
    }

    public func save(_ session: StoredSession, profile: String) throws {
        try fileAccess.withLock { _ in
            try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
            let data = session.storedJSON
            let target = fileURL(profile: profile)
            let temp = directory.appendingPathComponent(".\(target.lastPathComponent).\(UUID().uuidString).tmp")
            try FileCredentialStore.writeDurably(data, to: temp.path)
            guard rename(temp.path, target.path) == 0 else {
                let code = errno
                unlink(temp.path)
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "rename to \(target.path) failed: errno \(code)"])
            }
        }
    }

    public func wipe(profile: String) throws {
        try fileAccess.withLock { _ in
            let path = fileURL(profile: profile).path
            if unlink(path) != 0 && errno != ENOENT {
                throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot remove \(path): errno \(errno)"])
            }
        }
    }

    /// Creates `path` with mode 0600 (never wider, whatever the umask), writes and fsyncs.
    private static func writeDurably(_ data: Data, to path: String) throws {
        let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o600)
        guard fd >= 0 else {
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot create \(path): errno \(errno)"])
        }
        defer { close(fd) }
        let ok = data.withUnsafeBytes { raw -> Bool in
            var offset = 0
            while offset < raw.count {
                let n = write(fd, raw.baseAddress! + offset, raw.count - offset)
                if n <= 0 { return false }
                offset += n
            }
            return fsync(fd) == 0
        }
        if !ok {
            unlink(path)
            throw CocoaError(.fileWriteUnknown, userInfo: [NSLocalizedDescriptionKey: "cannot write \(path)"])
        }
    }
}
