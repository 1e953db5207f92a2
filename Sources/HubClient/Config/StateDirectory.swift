import Foundation
import SystemText

/// Where hubscript keeps its state: credentials, the journal, the embedded sandbox Hub,
/// run outputs. `--state-dir` wins, then `$XDG_STATE_HOME/hubscript`, then
/// `~/.local/state/hubscript`. Created with 0700 permissions on first use.
public struct StateDirectory: Sendable {
    /// The directory's absolute path (no trailing slash), built as a string: `URL.path`
    /// is costly on its first call in a process (run-time lookups of Foundation's generic
    /// code), which a run that only prints should not pay.
    public let path: String
    public let url: URL

    public init(explicit: String? = nil, environment: [String: String] = ProcessEnvironment.all) {
        if let explicit {
            path = AbsolutePath.of(explicit)
        } else if let xdg = environment["XDG_STATE_HOME"], !xdg.isEmpty {
            path = Self.join(AbsolutePath.of(xdg), "hubscript")
        } else {
            path = Self.join(AbsolutePath.of(environment["HOME"] ?? NSHomeDirectory()), ".local/state/hubscript")
        }
        url = URL(fileURLWithPath: path, isDirectory: true)
    }

    /// `name` inside `folder` (an absolute path without a trailing slash, `/` included).
    public static func join(_ folder: String, _ name: String) -> String { folder == "/" ? "/" + name : folder + "/" + name }

    /// The path of the folder `name` inside the state directory, created (0700) if missing.
    ///
    /// Both the state directory and the folder are checked as the configuration file is
    /// (`ConfigTrust`): they hold credentials, the vault and the journal (params, Hub
    /// responses), so each must be a directory owned by the current user (the state
    /// directory may also be root's). One writable by its group or others (another user
    /// made it 0777) is tightened: the state directory loses group and other write, the
    /// folder every group and other bit (0700).
    /// - Throws: `HubConfigError` saying whose it is and what to do.
    public func folderPath(_ name: String) throws -> String {
        let folder = Self.join(path, name)
        // Already there (every run but the first): a stat each, not FileManager's
        // attribute dictionary, whose key type alone costs a conformance scan at start-up.
        var status = stat()
        if stat(path, &status) == 0 { try Self.checkOwned(path, status, mayBeRoot: true, tighten: 0o022) }
        if stat(folder, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR {
            try Self.checkOwned(folder, status, mayBeRoot: false, tighten: 0o077)
            return folder
        }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw HubConfigError("cannot create the state folder \(folder): \(FileErrorText.reason(error, path: folder)) (set --state-dir to a writable folder)")
        }
        // Made now, or by another process at the same moment: checked either way.
        if stat(path, &status) == 0 { try Self.checkOwned(path, status, mayBeRoot: true, tighten: 0o022) }
        if stat(folder, &status) == 0 { try Self.checkOwned(folder, status, mayBeRoot: false, tighten: 0o077) }
        return folder
    }

    /// Throws unless a directory `status` describes is owned by the current user (or
    /// root, if `mayBeRoot`); clears the `tighten` bits of its mode if set. Anything but
    /// a directory is left to the folder's creation, which says what it is.
    static func checkOwned(_ folder: String, _ status: stat, mayBeRoot: Bool, tighten: mode_t,
                           user: uid_t = geteuid()) throws {
        guard (status.st_mode & S_IFMT) == S_IFDIR else { return }
        guard status.st_uid == user || (mayBeRoot && status.st_uid == 0) else {
            throw HubConfigError("""
                the state folder \(folder) is owned by another user (uid \(status.st_uid)), not by you (uid \(user)); it \
                holds your credentials, vault and journal, so hubscript uses only a folder of its own. Fix: set \
                --state-dir (or HUBSCRIPT_STATE_DIR) to a folder of your own, or remove this one and run again
                """)
        }
        guard status.st_mode & tighten != 0, status.st_uid == user else { return }
        let mode = status.st_mode & 0o7777 & ~tighten
        guard chmod(folder, mode) == 0 else {
            throw HubConfigError("""
                the state folder \(folder) can be changed by other users (mode \(String(status.st_mode & 0o7777, radix: 8))) \
                and could not be tightened: \(String(cString: strerror(errno))). Fix: chmod \(String(mode, radix: 8)) \(folder)
                """)
        }
    }

    /// The folder `name` inside the state directory, created (0700) if missing.
    public func folder(_ name: String) throws -> URL {
        URL(fileURLWithPath: try folderPath(name), isDirectory: true)
    }

    public var credentials: URL { get throws { try folder("credentials") } }
    public var sandboxFile: URL { get throws { URL(fileURLWithPath: try sandboxFilePath) } }
    public var sandboxFilePath: String { get throws { try folderPath("sandbox") + "/hub.sqlite" } }
    public var journalFile: URL { get throws { URL(fileURLWithPath: try journalFilePath) } }
    public var journalFilePath: String { get throws { try folderPath("journal") + "/journal.sqlite" } }
    public var runsFolder: URL { get throws { try folder("runs") } }
}

/// A configuration problem: the CLI prints it and exits with code 2.
public struct HubConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
