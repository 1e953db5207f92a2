#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Whether something is at a path, with `stat` (symbolic links followed, as
/// `FileManager.fileExists(atPath:)` does): without `FileManager.default`, whose first
/// use is a cost every run's start would pay to look for a file that is usually not
/// there (the configuration file; docs/performance.md, "What start-up avoids").
public enum PathStatus {
    public static func exists(_ path: String) -> Bool {
        var status = stat()
        return stat(path, &status) == 0
    }
}
