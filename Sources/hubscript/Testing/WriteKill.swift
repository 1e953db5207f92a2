import Foundation
import HTTPKit
import HubClient
import ScriptHost
import Synchronization

/// `kill_during_write = N` in a recipe test: models a process killed while its N-th
/// write was in flight — the request reached the Hub (its change is made) but the
/// response never came back, so the journal keeps the write `pending` (outcome
/// unknown), as `kill -9` at that moment leaves it. From then on nothing reaches the
/// Hub and every binding stops the run (a limit, which `pcall` cannot swallow), as if
/// the process were gone. `s:resume` then resends the pending write under its key.
final class WriteKill: Sendable {
    private struct State {
        var target: Int?
        var sent = 0
        var killed = false
    }

    private let state = Mutex(State())

    /// Arms it for one run: the `write`-th write the run sends loses its response (nil: never).
    func arm(_ write: Int?) {
        state.withLock { $0 = State(target: write) }
    }

    var hasKilled: Bool { state.withLock { $0.killed } }

    /// Counts a write sent; true when it is the one whose response is lost.
    fileprivate func sentWrite() -> Bool {
        state.withLock { s in
            s.sent += 1
            if s.sent == s.target { s.killed = true }
            return s.killed
        }
    }

    static func gone(_ what: String) -> HubError {
        HubError(code: "process_killed", message: "the test killed the process \(what) (kill_during_write)")
    }

    /// The run's gate with the kill in front: after the kill, any binding ends the run.
    func gate(before inner: (@Sendable (ScriptFunction) throws -> Void)?) -> @Sendable (ScriptFunction) throws -> Void {
        { [self] function in
            if hasKilled { throw ScriptLimitError("the process was killed during a write (kill_during_write); nothing more runs") }
            try inner?(function)
        }
    }
}

/// The test sandbox's transport: the Hub in process, with `WriteKill` between them.
struct KillableTransport: HubTransport {
    let inner: InProcessTransport
    let kill: WriteKill

    func perform(_ request: HTTPRequestMessage, baseURL: URL, timeouts: HubTimeouts) throws -> HTTPResponseMessage {
        if kill.hasKilled { throw WriteKill.gone("before this request was sent") }
        let response = try inner.perform(request, baseURL: baseURL, timeouts: timeouts)
        if request.headers["Idempotency-Key"] != nil, kill.sentWrite() {
            throw WriteKill.gone("after the Hub received this write, before its response arrived")
        }
        return response
    }
}
