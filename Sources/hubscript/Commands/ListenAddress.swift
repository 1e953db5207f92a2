import HTTPKit

/// Where `listen` (and `jobs serve --listen`) receives webhook deliveries: 127.0.0.1 by
/// default, or the address `--bind` names — an IP literal, checked here so a typo is a
/// usage error (exit 2) before anything starts.
struct ListenAddress {
    static let bindOption = OptionSpec(
        name: "bind", valueName: "address",
        help: "The address to listen on (default 127.0.0.1): 0.0.0.0, :: or one of this host's, behind a TLS-terminating proxy.")

    let host: String
    let port: UInt16
    /// The connection caps (`--max-connections`, `--max-connections-per-address`).
    let limits: HTTPServerLimits

    init(bind: String?, port: UInt16, limits: HTTPServerLimits = HTTPServerLimits()) throws {
        self.port = port
        self.limits = limits
        guard let bind else {
            host = "127.0.0.1"
            return
        }
        guard HTTPServer.isAddressLiteral(bind) else {
            throw UsageError("--bind takes an IP address (127.0.0.1, 0.0.0.0, :: or one of this host's), got '\(bind)'")
        }
        host = bind
    }

    /// Whether the address can be reached from other hosts.
    var isBeyondLoopback: Bool { !LoopbackHTTPClient.isLoopback(host) }

    /// Binds the server (an in-use port or an address this host does not have throws),
    /// after raising the open-file limit to fit its connections.
    func server(_ handler: @escaping HTTPServer.Handler) throws -> HTTPServer {
        ServerLimitOptions.prepareDescriptors(servers: 1, limits: limits)
        return try HTTPServer(host: host, port: port, limits: limits, beyondLoopback: true, handler: handler)
    }

    /// The URL deliveries reach, for the start-up line.
    func url(port bound: UInt16) -> String {
        let shown = host.contains(":") && !host.hasPrefix("[") ? "[\(host)]" : host
        return "http://\(shown):\(bound)"
    }
}
