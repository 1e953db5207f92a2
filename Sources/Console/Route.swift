import Foundation
import Synchronization

/// The console's pages and actions, by path.
enum Route: Equatable {
    case runs, plans, plan(String), approve(String), reject(String), run(String), runEvents(String), jobs, job(String), fire(String), triggers, signIn, signOut
    case style, script, unknown

    init(_ segments: [String]) {
        switch segments.count {
        case 0: self = .runs
        case 1:
            switch segments[0] {
            case "runs": self = .runs
            case "plans": self = .plans
            case "jobs": self = .jobs
            case "triggers": self = .triggers
            case "signin": self = .signIn
            case "signout": self = .signOut
            default: self = .unknown
            }
        case 2:
            switch segments[0] {
            case "runs": self = .run(segments[1])
            case "plans": self = .plan(segments[1])
            case "jobs": self = .job(segments[1])
            case "static" where segments[1] == "console.css": self = .style
            case "static" where segments[1] == "console.js": self = .script
            default: self = .unknown
            }
        case 3 where segments[0] == "runs" && segments[2] == "events": self = .runEvents(segments[1])
        case 3 where segments[0] == "jobs" && segments[2] == "fire": self = .fire(segments[1])
        case 3 where segments[0] == "plans" && segments[2] == "approve": self = .approve(segments[1])
        case 3 where segments[0] == "plans" && segments[2] == "reject": self = .reject(segments[1])
        default: self = .unknown
        }
    }
}

/// A flag one thread sets and others read.
final class StopFlag: Sendable {
    private let value = Mutex(false)
    func set() { value.withLock { $0 = true } }
    var isSet: Bool { value.withLock { $0 } }
}
