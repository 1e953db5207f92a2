import Foundation
import XCTest

/// What one `kill -9` of a run left behind: the journal's write states, and how many of
/// the run's writes the server (the Hub, Dispatch) holds once its request in flight ended.
struct KillTrial: CustomStringConvertible {
    let done: Int
    let pending: Int
    let received: Int
    /// Who received them, for messages: "Hub", "Dispatch".
    let server: String

    init(states: [String: Int], received: Int, server: String) {
        done = states["done", default: 0]
        pending = states["pending", default: 0]
        self.received = received
        self.server = server
    }

    var description: String { "journal done \(done), pending \(pending); \(server) received \(received)" }

    /// Fails unless the trials prove something: a kill landed on a pending write, and the
    /// server held a write the journal had not recorded done (so a resend needed its
    /// replay); and no trial shows a write the journal never made.
    static func assertMeaningful(_ trials: [KillTrial], file: StaticString = #filePath, line: UInt = #line) {
        let server = trials.first?.server ?? "the server"
        XCTAssertTrue(trials.contains { $0.pending >= 1 }, "no kill landed on a pending write: \(trials)", file: file, line: line)
        XCTAssertTrue(trials.contains { $0.received > $0.done },
                      "\(server) never held a write the journal had not recorded done, so no resend needed a replay: \(trials)",
                      file: file, line: line)
        for trial in trials {
            XCTAssertLessThanOrEqual(trial.received, trial.done + trial.pending,
                                     "\(server) received a write the journal never sent: \(trials)", file: file, line: line)
        }
    }
}

extension CLIHarness {
    /// Starts `args` and SIGKILLs it once run `id` has at least `threshold` done writes
    /// and one pending (a request in flight); fails the test if the run ended first. Then
    /// waits `settle` microseconds (longer than the served sandbox's latency) so the
    /// request in flight reaches its handler, and returns the journal's write states.
    func killOnPending(_ args: [String], runID id: String, atDone threshold: Int, within seconds: Double = 30,
                       settle: useconds_t = 600_000, state: URL? = nil,
                       file: StaticString = #filePath, line: UInt = #line) throws -> [String: Int] {
        let (p, stopDraining) = try startDrained(args, state: state)
        defer { stopDraining() }
        let deadline = Date().addingTimeInterval(seconds)
        while p.isRunning && Date() < deadline {
            let states = try writeStates(id)
            if states["done", default: 0] >= threshold && states["pending", default: 0] >= 1 {
                Foundation.kill(p.processIdentifier, SIGKILL)
                break
            }
            usleep(5_000)
        }
        p.waitUntilExit()
        XCTAssertEqual(p.terminationReason, .uncaughtSignal, "the run ended (status \(p.terminationStatus)) before the kill at \(threshold) done",
                       file: file, line: line)
        usleep(settle)
        return try writeStates(id)
    }
}
