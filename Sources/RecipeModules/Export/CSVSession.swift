import Foundation
import ScriptHost

/// The CSV files one run may read and the ones it has open.
///
/// Only paths in `allowedFiles` (the recipe's `file` params, absolute) can be opened;
/// paths are compared after standardising (`..` and `.` removed, relative paths made
/// absolute against the working directory), without resolving symbolic links. At most
/// `maxOpenFiles` are open at once. A file is closed when its iteration reaches the
/// end, when a `for` loop over it is left early (Lua 5.4 closes the loop's
/// to-be-closed value), or by `closeAll()` (also on deinit) when the run ends.
/// Thread-safe.
public final class CSVSession: @unchecked Sendable {
    public static let maxOpenFiles = 32

    /// Standardised absolute paths the recipe may read.
    public let allowedFiles: Set<String>
    /// An NSLock, not a Mutex: a reader (not Sendable) is taken out of the table and
    /// read outside the lock by the one run that owns it.
    private let lock = NSLock()
    private var readers: [Int: CSVFileReader] = [:]
    private var nextID = 1

    public init(allowedFiles: Set<String>) {
        self.allowedFiles = Set(allowedFiles.map(Self.standardized))
    }

    deinit { closeAll() }

    /// How many files are open now.
    public var openCount: Int { lock.withLock { readers.count } }

    /// Closes every open file (idempotent).
    public func closeAll() {
        let open = lock.withLock {
            let list = Array(readers.values)
            readers.removeAll()
            return list
        }
        for reader in open { reader.close() }
    }

    static func standardized(_ path: String) -> String {
        URL(fileURLWithPath: path).standardizedFileURL.path
    }

    // MARK: Used by CSVPlugin

    /// Opens `path` if it is allowed; returns its handle (never reused within a session).
    func open(_ path: String) throws -> Int {
        let absolute = Self.standardized(path)
        guard allowedFiles.contains(absolute) else {
            throw ScriptMessageError("csv.rows: \(SoftFailure.quoted(path, limit: 4096)) is not a file parameter of this recipe (declare it in params with type = \"file\")")
        }
        try lock.withLock {
            guard readers.count < Self.maxOpenFiles else {
                throw ScriptMessageError("csv.rows: too many CSV files open at once (\(Self.maxOpenFiles)); finish or leave earlier loops over csv.rows first")
            }
        }
        let reader = try CSVFileReader(path: absolute, displayPath: path)
        return lock.withLock {
            let id = nextID
            nextID += 1
            readers[id] = reader
            return id
        }
    }

    /// The next row of file `id`, or nil at its end (it is closed then) or if it was closed.
    func next(_ id: Int) throws -> [String: ScriptValue]? {
        guard let reader = lock.withLock({ readers[id] }) else { return nil }
        do {
            if let row = try reader.next() { return row }
        } catch {
            close(id)
            throw error
        }
        close(id)
        return nil
    }

    /// Closes file `id` (nothing if it is already closed).
    func close(_ id: Int) {
        lock.withLock { readers.removeValue(forKey: id) }?.close()
    }
}
