import HTTPKit

/// `--max-connections` and `--max-connections-per-address` of the commands that serve
/// HTTP (`listen`, `jobs serve --listen`, `sandbox serve`): the connection caps of
/// ``HTTPServerLimits``; the request deadlines keep their defaults (docs/operations.md).
enum ServerLimitOptions {
    static let specs = [
        OptionSpec(name: "max-connections", valueName: "n",
                   help: "Connections served at once (default 256; lowered to fit under ulimit -n)."),
        OptionSpec(name: "max-connections-per-address", valueName: "n",
                   help: "Connections one client address may hold (default 64; 0: no cap but --max-connections). Raise it behind a reverse proxy."),
    ]

    /// The limits the arguments ask for, the defaults for what they leave out.
    static func limits(_ arguments: ParsedArguments) throws -> HTTPServerLimits {
        var limits = HTTPServerLimits()
        if let text = arguments.value("max-connections") {
            guard let n = Int(text), (1...65_536).contains(n) else {
                throw UsageError("--max-connections takes a whole number from 1 to 65536, got '\(text)'")
            }
            limits.maxConnections = n
        }
        if let text = arguments.value("max-connections-per-address") {
            guard let n = Int(text), (0...65_536).contains(n) else {
                throw UsageError("--max-connections-per-address takes a whole number from 0 (no cap of its own) to 65536, got '\(text)'")
            }
            limits.maxConnectionsPerAddress = n
        }
        return limits
    }

    /// Raises the open-file limit for `servers` servers with `limits`, and says on
    /// stderr when it still holds `server` below the connections asked for.
    static func prepareDescriptors(servers: Int, limits: HTTPServerLimits) {
        HTTPServer.raiseDescriptorLimit(toServe: servers, with: limits)
    }

    /// The warning line for a server the open-file limit holds below its
    /// `maxConnections`, or nil.
    static func shortfall(_ server: HTTPServer, name: String) -> String? {
        guard server.maxConnections < server.limits.maxConnections else { return nil }
        return "\(name): the open-file limit (ulimit -n) leaves room for \(server.maxConnections) connections at once, "
            + "not \(server.limits.maxConnections): raise it (ulimit -n, systemd LimitNOFILE=) to serve that many\n"
    }
}
