import Foundation
import Synchronization

/// The gauges `/metrics` computes at each scrape from what a process keeps on disk: the
/// journal's size and oldest run (read by the closure the caller gives, which knows the
/// journal), and the run folder's size (`FolderSize`, a bounded walk cached for a while).
///
/// When `journal` throws, its two samples are left out and `hubscript_journal_reachable`
/// is 0: a journal that is down never hides the other gauges or fails the scrape.
public struct StorageGauges: Sendable {
    /// What the journal says now: its size in bytes and its oldest run's start (nil: no run).
    public struct JournalFigures: Sendable, Equatable {
        public var bytes: Int64
        public var oldestRunStart: Date?

        public init(bytes: Int64, oldestRunStart: Date?) {
            self.bytes = bytes
            self.oldestRunStart = oldestRunStart
        }
    }

    public let journal: @Sendable () throws -> JournalFigures
    public let runFolder: FolderSize?

    public init(journal: @escaping @Sendable () throws -> JournalFigures, runFolder: FolderSize?) {
        self.journal = journal
        self.runFolder = runFolder
    }

    /// Adds the gauges to `registry`'s scrapes.
    public func install(on registry: MetricsRegistry) {
        registry.collect { self.families() }
    }

    /// The families, read now.
    public func families() -> [MetricFamilySnapshot] {
        var out: [MetricFamilySnapshot] = []
        func gauge(_ name: String, _ help: String, _ value: Double?) {
            out.append(MetricFamilySnapshot(name: name, help: help, type: .gauge,
                                            samples: value.map { [MetricSample(name: name, value: $0)] } ?? []))
        }
        let figures = try? journal()
        gauge("hubscript_journal_size_bytes", "The journal's size in bytes (SQLite: the file, its WAL and shared memory; PostgreSQL: its tables with their indexes and TOAST).", figures.map { Double($0.bytes) })
        gauge("hubscript_journal_oldest_run_start_time_seconds", "When the oldest run in the journal started, in seconds since 1970 (absent when the journal has no run).", figures?.oldestRunStart?.timeIntervalSince1970)
        gauge("hubscript_journal_reachable", "1 when the journal answered this scrape's queries, 0 when it did not.", figures == nil ? 0 : 1)
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
public final class FolderSize: Sendable {
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
    /// The last measure and when it was taken; held during a walk.
    private let cached = Mutex<(at: Date, measure: Measure)?>(nil)
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
        cached.withLock { cached in
            let now = clock()
            if let cached, now.timeIntervalSince(cached.at) < maxAge, now >= cached.at { return cached.measure }
            let measure = walk()
            cached = (now, measure)
            return measure
        }
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
