import Foundation
import SystemText

/// Where hubscript keeps its state: credentials, the journal, the embedded sandbox Hub,
/// run outputs. `--state-dir` wins, then `$XDG_STATE_HOME/hubscript`, then
/// `~/.local/state/hubscript`. Created with 0700 permissions on first use.
public struct StateDirectory: Sendable {
    public let url: URL

    public init(explicit: String? = nil, environment: [String: String] = ProcessEnvironment.all) {
        if let explicit {
            url = URL(fileURLWithPath: explicit, isDirectory: true)
        } else if let xdg = environment["XDG_STATE_HOME"], !xdg.isEmpty {
            url = URL(fileURLWithPath: xdg, isDirectory: true).appendingPathComponent("hubscript", isDirectory: true)
        } else {
            let home = environment["HOME"] ?? NSHomeDirectory()
            url = URL(fileURLWithPath: home, isDirectory: true)
                .appendingPathComponent(".local/state/hubscript", isDirectory: true)
        }
    }

    /// The folder `name` inside the state directory, created (0700) if missing.
    public func folder(_ name: String) throws -> URL {
        let folder = url.appendingPathComponent(name, isDirectory: true)
        // Already there (every run but the first): one stat, not FileManager's attribute
        // dictionary, whose key type alone costs a conformance scan at start-up.
        var status = stat()
        if stat(folder.path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR { return folder }
        do {
            try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true,
                                                    attributes: [.posixPermissions: 0o700])
        } catch {
            throw HubConfigError("cannot create the state folder \(folder.path): \(FileErrorText.reason(error, path: folder.path)) (set --state-dir to a writable folder)")
        }
        return folder
    }

    public var credentials: URL { get throws { try folder("credentials") } }
    public var sandboxFile: URL { get throws { try folder("sandbox").appendingPathComponent("hub.sqlite") } }
    public var journalFile: URL { get throws { try folder("journal").appendingPathComponent("journal.sqlite") } }
    public var runsFolder: URL { get throws { try folder("runs") } }
}

/// A configuration problem: the CLI prints it and exits with code 2.
public struct HubConfigError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}
