import Foundation
import HTTPKit
import RunJournal

/// `/runs/ID/events`: the live view of a run, as server-sent events (`text/event-stream`).
///
/// Each response carries one event and ends; the browser's `EventSource` reconnects
/// after `retry` milliseconds with the `Last-Event-ID` it was given. So no connection
/// is held by a finished view, and the server never needs to stream. A request
/// reads the journal every `livePollInterval` seconds (0.25 by default) and answers as
/// soon as what a viewer sees differs from `Last-Event-ID` (the run's fingerprint); with
/// nothing new after `liveWait` seconds it answers a comment, and the browser asks
/// again. So the page is at most about half a second behind the journal.
///
/// Events: `run` (the run's state and writes as the page's `#run-live` markup, every
/// text in it escaped) while it runs; `done` (the same, final) once it has ended or its
/// process is gone, after which the script stops listening.
struct LiveRunEvents {
    let context: ConsoleContext
    let page: RunPage
    /// Set when the console stops: answer what there is, now.
    var stopping = StopFlag()

    /// Milliseconds the browser waits before it asks again.
    static let retryMs = 250

    func respond(id: String, lastEventID: String?, writesPage: Int) throws -> HTTPResponseMessage? {
        let deadline = Date().addingTimeInterval(context.liveWait)
        while true {
            guard let activity = try context.journal.runActivity(id: id) else { return nil }
            let status = context.status(activity.run)
            let ended = status != "running"
            let fingerprint = activity.fingerprint + (ended ? "-ended" : "")
            if fingerprint != lastEventID || ended {
                let fragment = page.liveFragment(activity, status: status, writesPage: writesPage)
                return Self.response(Self.event(ended ? "done" : "run", id: fingerprint, data: fragment.markup))
            }
            if Date() >= deadline || stopping.isSet { return Self.response(": nothing new\n\n") }
            Thread.sleep(forTimeInterval: context.livePollInterval)
        }
    }

    static func response(_ body: String) -> HTTPResponseMessage {
        var headers = ConsoleResponse.headers(contentType: "text/event-stream; charset=utf-8")
        headers.add("X-Accel-Buffering", "no")
        return HTTPResponseMessage(status: 200, headers: headers, body: Data(("retry: \(retryMs)\n" + body).utf8))
    }

    /// One event: `event:`, `id:` and one `data:` line per line of `data` (a carriage
    /// return or line feed in it starts a new `data:` line, so it can never end the
    /// event or forge a field), then the blank line that ends it.
    static func event(_ name: String, id: String, data: String) -> String {
        let oneLine = { (s: String) in s.replacingOccurrences(of: "\r", with: "").replacingOccurrences(of: "\n", with: "") }
        var text = "event: \(oneLine(name))\nid: \(oneLine(id))\n"
        var line = ""
        var previousWasCR = false
        for scalar in data.unicodeScalars {
            if scalar == "\r" || (scalar == "\n" && !previousWasCR) {
                text += "data: " + line + "\n"
                line = ""
            } else if scalar != "\n" {
                line.unicodeScalars.append(scalar)
            }
            previousWasCR = scalar == "\r"
        }
        text += "data: " + line + "\n\n"
        return text
    }
}
