import Foundation

/// The gauges `/metrics` computes at each scrape from what a process keeps on disk: the
/// journal's size and oldest run (through the closures the caller gives, which know the
/// journal), and the run folder's size (`FolderSize`, a bounded walk cached for a while).
///
/// A closure that throws leaves its sample out and sets `hubscript_journal_reachable`
/// to 0, so one failing source never hides the others or fails the scrape.
public struct StorageGauges: Sendable {
    public let journalBytes: @Sendable () throws -> Int64
    public let oldestRunStart: @Sendable () throws -> Date?
    public let runFolder: FolderSize?

    public init(journalBytes: @escaping @Sendable () throws -> Int64, oldestRunStart: @escaping @Sendable () throws -> Date?,
                runFolder: FolderSize?) {
        self.journalBytes = journalBytes
        self.oldestRunStart = oldestRunStart
        self.runFolder = runFolder
    }

    /// Adds the gauges to `registry`'s scrapes.
    public func install(on registry: MetricsRegistry) {
        registry.collect { self.families() }
    }

    /// The families, read now.
    public func families() -> [MetricFamilySnapshot] {
        var out: [MetricFamilySnapshot] = []
        var reachable = true
        func gauge(_ name: String, _ help: String, _ value: Double?) {
            out.append(MetricFamilySnapshot(name: name, help: help, type: .gauge,
                                            samples: value.map { [MetricSample(name: name, value: $0)] } ?? []))
        }
        let bytes: Double?
        do { bytes = Double(try journalBytes()) } catch { bytes = nil; reachable = false }
        gauge("hubscript_journal_size_bytes", "The journal's size in bytes (SQLite: the file, its WAL and shared memory; PostgreSQL: its tables with their indexes and TOAST).", bytes)
        let oldest: Double?
        do { oldest = try oldestRunStart().map { $0.timeIntervalSince1970 } } catch { oldest = nil; reachable = false }
        gauge("hubscript_journal_oldest_run_start_time_seconds", "When the oldest run in the journal started, in seconds since 1970 (absent when the journal has no run).", oldest)
        gauge("hubscript_journal_reachable", "1 when the journal answered this scrape's queries, 0 when it did not.", reachable ? 1 : 0)
        if let runFolder {
            let size = runFolder.measure()
            gauge("hubscript_run_folder_size_bytes", "Bytes of the files under the state directory's runs/ folder (the runs' exports), measured at most once a minute.", Double(size.bytes))
            gauge("hubscript_run_folder_files", "Files under the runs/ folder, measured with its size.", Double(size.files))
            gauge("hubscript_run_folder_walk_complete", "1 when the last walk of the runs/ folder saw every file, 0 when it stopped at its bound (the size is then a lower bound).", size.complete ? 1 : 0)
        }
        return out
    }
}

/// The size of a folder's files, by a walk bounded in entries and time, cached for
/// `maxAge` so frequent scrapes do not walk a large export folder each time.
///
/// Symbolic links are not followed (nor counted); a missing folder is 0 bytes. A walk
/// that reaches `maxEntries` or `maxSeconds` stops and says it is incomplete.
public final class FolderSize: @unchecked Sendable {
    public struct Measure: Sendable, Equatable {
        public var bytes: Int64
        public var files: Int
        public var complete: Bool

        public init(bytes: Int64, files: Int, complete: Bool) {
            self.bytes = bytes
            self.files = files
            self.complete = complete
        }
    }

    public let folder: URL
    public let maxAge: TimeInterval
    public let maxEntries: Int
    public let maxSeconds: TimeInterval
    private let lock = NSLock()
    private var cached: (at: Date, measure: Measure)?
    private let clock: @Sendable () -> Date

    public init(folder: URL, maxAge: TimeInterval = 60, maxEntries: Int = 200_000, maxSeconds: TimeInterval = 2,
                clock: @escaping @Sendable () -> Date = { Date() }) {
        self.folder = folder
        self.maxAge = maxAge
        self.maxEntries = maxEntries
        self.maxSeconds = maxSeconds
        self.clock = clock
    }

    /// The cached measure when younger than `maxAge`, else a new walk. One walk at a
    /// time: a scrape that arrives during a walk waits for it.
    public func measure() -> Measure {
        lock.lock()
        defer { lock.unlock() }
        let now = clock()
        if let cached, now.timeIntervalSince(cached.at) < maxAge, now >= cached.at { return cached.measure }
        let measure = walk()
        cached = (now, measure)
        return measure
    }

    private func walk() -> Measure {
        var result = Measure(bytes: 0, files: 0, complete: true)
        guard let walker = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: [], options: [],
                                                          errorHandler: { _, _ in true }) else { return result }
        let started = Date()
        var entries = 0
        for case let url as URL in walker {
            entries += 1
            if entries > maxEntries || (entries % 512 == 0 && Date().timeIntervalSince(started) > maxSeconds) {
                result.complete = false
                break
            }
            // lstat: a symbolic link is itself, never what it points to.
            guard let attributes = try? FileManager.default.attributesOfItem(atPath: url.path),
                  attributes[.type] as? FileAttributeType == .typeRegular else { continue }
            result.files += 1
            result.bytes += (attributes[.size] as? NSNumber)?.int64Value ?? 0
        }
        return result
    }
}
