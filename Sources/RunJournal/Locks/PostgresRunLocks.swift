import Foundation
import PostgresKit
import Synchronization

/// The run locks of a PostgreSQL journal, shared by every host that uses it: a
/// session advisory lock (`pg_try_advisory_lock`) on a connection of its own, held for
/// the run.
///
/// Contracts (besides `RunLocks`'):
/// - The key is 64 bits of SHA-256 over the journal's schema and the run id, so
///   journals in different schemas of one database never contend.
/// - The server drops the lock when the holder's connection ends: the process ended
///   (`kill -9` included: the kernel closes its socket), or the server restarted. A
///   host that vanishes without closing its TCP connection holds it until the server
///   notices (its `tcp_keepalives_*` settings).
/// - The holder's connection names it (`application_name`: `hubscript pid N on HOST`),
///   so a refusal says which process on which host holds the run.
/// - `isHeld` reads `pg_locks` on one probe connection per `PostgresRunLocks` (never
///   taking the lock, so it cannot make an `acquire` fail); false when the server
///   cannot be reached.
public final class PostgresRunLocks: RunLocks, Sendable {
    let url: PostgresURL
    let schema: String
    /// The probe connection, opened on first use and again after a failure.
    private let probe = Mutex<PostgresConnection?>(nil)

    public init(url: PostgresURL, schema: String) {
        self.url = url
        self.schema = schema
    }

    /// A 64-bit advisory-lock key for `name` in `schema`.
    public static func key(_ name: String, schema: String) -> Int64 {
        let hex = Digest.sha256Hex("hubscript\u{0}\(schema)\u{0}\(name)")
        return Int64(bitPattern: UInt64(hex.prefix(16), radix: 16) ?? 0)
    }

    func key(_ runID: String) -> Int64 { Self.key("run " + runID, schema: schema) }

    public func acquire(_ runID: String) throws -> any HeldRunLock {
        do {
            let host = ProcessInfo.processInfo.hostName.prefix(30)
            let connection = try PostgresConnection(url: url, applicationName: "hubscript pid \(getpid()) on \(host)")
            let key = key(runID)
            guard try connection.first("SELECT pg_try_advisory_lock($1)", [.int(Int(key))], { $0.bool(0) }) == true else {
                let holder = try? holderName(key, connection)
                connection.close()
                throw Self.busy(runID, holder: holder ?? nil)
            }
            return PostgresRunLock(runID: runID, key: key, connection: connection)
        } catch let error as PostgresError {
            throw Journal.postgresError(error)
        }
    }

    public func isHeld(_ runID: String) -> Bool {
        probe.withLock { probe in
            do {
                if probe == nil || probe?.isOpen == false { probe = try PostgresConnection(url: url) }
                return try probe?.first("SELECT count(*) FROM pg_locks l \(Self.matching)", Self.keyParts(key(runID)),
                                        { $0.int(0) > 0 }) ?? false
            } catch {
                probe = nil
                return false
            }
        }
    }

    /// `pg_locks` rows of a granted session advisory lock with the bigint key `$1, $2`.
    private static let matching = """
        WHERE l.locktype = 'advisory' AND l.granted AND l.objsubid = 1
          AND l.classid::bigint = $1 AND l.objid::bigint = $2
          AND l.database = (SELECT oid FROM pg_database WHERE datname = current_database())
        """

    /// A bigint key as `pg_locks` shows it: high and low 32 bits, unsigned.
    private static func keyParts(_ key: Int64) -> [PostgresValue] {
        let bits = UInt64(bitPattern: key)
        return [.int(Int(bits >> 32)), .int(Int(bits & 0xFFFF_FFFF))]
    }

    private func holderName(_ key: Int64, _ connection: PostgresConnection) throws -> String? {
        try connection.first("""
            SELECT a.application_name FROM pg_locks l JOIN pg_stat_activity a ON a.pid = l.pid \(Self.matching)
            """, Self.keyParts(key), { $0.textOrNil(0) }) ?? nil
    }

    /// `Busy` naming the holder from its `application_name` (`hubscript pid N on HOST`).
    static func busy(_ runID: String, holder: String?) -> RunLock.Busy {
        guard let holder, holder.hasPrefix("hubscript pid "),
              let on = holder.range(of: " on ") else { return RunLock.Busy(runID: runID, pid: nil) }
        let pid = Int32(holder[holder.index(holder.startIndex, offsetBy: "hubscript pid ".count)..<on.lowerBound])
        return RunLock.Busy(runID: runID, pid: pid, host: String(holder[on.upperBound...]))
    }
}

/// A run's advisory lock: held while its connection is open.
final class PostgresRunLock: HeldRunLock, Sendable {
    let runID: String
    private let key: Int64
    /// The lock's session; nil once released.
    private let connection: Mutex<PostgresConnection?>

    init(runID: String, key: Int64, connection: sending PostgresConnection) {
        self.runID = runID
        self.key = key
        self.connection = Mutex(connection)
        Self.held.add(self)
    }

    deinit { release() }

    /// Unlocks (so the lock is free when this returns: a closed session's locks go
    /// only when the server has ended it), then closes the connection.
    func release() {
        connection.withLock { connection in
            _ = try? connection?.run("SELECT pg_advisory_unlock($1)", [.int(Int(key))])
            connection?.close()
            connection = nil
        }
        Self.held.remove(self)
    }

    /// The server process of the lock's session (tests end it to drop the lock).
    var backendPID: Int32 { connection.withLock { $0?.backendPID ?? 0 } }

    /// Whether the server dropped this lock's session (it restarted, or ended the
    /// session): asks the server, on the lock's own connection.
    var isLost: Bool {
        connection.withLock { connection in
            guard let connection else { return false }
            return (try? connection.run("SELECT 1", [])) == nil
        }
    }

    /// The run locks this process holds.
    static let held = HeldLocks()

    /// Whether any run lock this process holds was lost with its session. The journal
    /// asks before it reconnects after losing its own connection: a run whose lock went
    /// with a server restart must not go on writing (another host may take it over), so
    /// the journal stays unusable to this process until that run has stopped.
    static func anyLost() -> Bool { held.all.contains { $0.isLost } }
}

/// The `PostgresRunLock`s alive in this process (thread-safe).
final class HeldLocks: Sendable {
    private struct Weak { weak var value: PostgresRunLock? }
    private let locks = Mutex<[ObjectIdentifier: Weak]>([:])

    func add(_ l: PostgresRunLock) { locks.withLock { $0[ObjectIdentifier(l)] = Weak(value: l) } }
    func remove(_ l: PostgresRunLock) { locks.withLock { _ = $0.removeValue(forKey: ObjectIdentifier(l)) } }
    var all: [PostgresRunLock] { locks.withLock { $0.values.compactMap(\.value) } }
}
