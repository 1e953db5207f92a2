import Foundation
import SystemText

/// Where hubscript keeps its state: credentials, the journal, the embedded sandbox Hub,
/// run outputs. `--state-dir` wins, then `$XDG_STATE_HOME/hubscript`, then
/// `~/.local/state/hubscript`. Created with 0700 permissions on first use.
public struct StateDirectory: Sendable {
    /// The directory's absolute path (no trailing slash), built as a string: `URL.path`
    /// costs about 0.6 M instructions on its first call in a process (run-time lookups of
    /// Foundation's generic code), which a run that only prints should not pay.
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
    public func folderPath(_ name: String) throws -> String {
        let folder = Self.join(path, name)
        // Already there (every run but the first): one stat, not FileManager's attribute
        // dictionary, whose key type alone costs a conformance scan at start-up.
        var status = stat()
        if stat(folder, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR { return folder }
        do {
            try FileManager.default.createDirectory(atPath: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw HubConfigError("cannot create the state folder \(folder): \(FileErrorText.reason(error, path: folder)) (set --state-dir to a writable folder)")
        }
        return folder
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
