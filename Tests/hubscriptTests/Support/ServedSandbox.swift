import Foundation
import XCTest

/// `hubscript sandbox serve` in a child process, on ephemeral ports, with a profile
/// file pointing at it. Stopped (SIGINT) by `stop()` or when released.
final class ServedSandbox {
    let process: Process
    /// `http://127.0.0.1:PORT`.
    let url: String
    /// The sandbox Dispatch's `http://127.0.0.1:PORT`.
    let dispatchURL: String
    /// A configuration file with the profile `served` (jobs key, no client-side pacing).
    let config: String
    private let out: Pipe
    private let err: Pipe
    /// Signalled once by the termination handler (and re-signalled by whoever waits on it).
    private let exited: DispatchSemaphore

    /// Starts the sandbox whose state is in `state` (reset it first) with `faults`
    /// (and the Hub's rate limits when `rateLimits` is "standard").
    init(_ cli: CLIHarness, state: URL, faults: String, rateLimits: String = "off", extraArguments: [String] = []) throws {
        let (server, out, err) = cli.process(["sandbox", "serve", "--port", "0", "--dispatch-port", "0", "--rate-limits", rateLimits,
                                              "--faults", faults] + extraArguments, state: state)
        let banner = LockedText()
        out.fileHandleForReading.readabilityHandler = { banner.append($0.availableData) }
        err.fileHandleForReading.readabilityHandler = { banner.append($0.availableData) }
        // `Process.isRunning` can read false for a moment right after `run()`; only the
        // termination handler says for certain that the server has exited.
        let exited = DispatchSemaphore(value: 0)
        self.exited = exited
        server.terminationHandler = { _ in exited.signal() }
        try server.run()
        process = server
        self.out = out
        self.err = err
        var url: String?
        var dispatchURL: String?
        let started = Date()
        let deadline = started.addingTimeInterval(20)
        var hasExited = false
        while Date() < deadline {
            // One reading of the banner for both addresses: the Hub's line comes first.
            let text = banner.text
            url = text.range(of: #"http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression).map { String(text[$0]) }
            dispatchURL = text.range(of: #"Dispatch +http://127\.0\.0\.1:[0-9]+"#, options: .regularExpression)
                .map { String(text[$0].split(separator: " ").last ?? "") }
            if url != nil && dispatchURL != nil { break }
            if exited.wait(timeout: .now() + .milliseconds(20)) == .success {
                exited.signal()
                hasExited = true
                break
            }
        }
        guard let url, let dispatchURL else {
            if !hasExited { server.interrupt() }
            server.waitUntilExit()
            let after = String(format: "%.2f s", Date().timeIntervalSince(started))
            throw ServedSandboxError(description: hasExited
                ? "sandbox serve exited (status \(server.terminationStatus)) after \(after) before it printed its addresses: \(banner.text)"
                : "sandbox serve did not print its addresses within 20 s (waited \(after)): \(banner.text)")
        }
        self.url = url
        self.dispatchURL = dispatchURL
        config = try cli.file("served.config.lua", """
            return { profiles = { served = { hub_url = "\(url)", api_key = "satk_test_jobs_sandbox_0000000000000000",
                                             api_key_id = "key_jobs", rate_limit_per_minute = 0 } } }
            """)
    }

    func stop() {
        if exited.wait(timeout: .now()) == .success {
            exited.signal()
        } else {
            process.interrupt()
        }
        process.waitUntilExit()
        out.fileHandleForReading.readabilityHandler = nil
        err.fileHandleForReading.readabilityHandler = nil
    }

    deinit { stop() }
}

struct ServedSandboxError: Error, CustomStringConvertible { let description: String }
