import Foundation
import XCTest
import SystemText
@testable import Configuration
import HTTPKit
import RunJournal
@testable import Console

/// What the pages show, with hostile text from the journal shown as text, and the
/// live view's server-sent events.
final class ConsolePagesTests: XCTestCase {
    static let hostile = "<script>alert(1)</script>\"><img src=x onerror=alert(2)>'\u{202E}\u{7}"
    static let hostileShown = "&lt;script&gt;alert(1)&lt;/script&gt;&quot;&gt;&lt;img src=x onerror=alert(2)&gt;&#39;‹U+202E›‹U+0007›"

    private func hostileRun(_ journal: Journal, id: String = "run<1>") throws {
        try journal.startRun(RunStart(id: id, recipePath: "/srv/" + Self.hostile + ".lua", recipeSHA256: "ab",
                                      paramsJSON: "{\"name\":\"\(Self.hostile.replacingOccurrences(of: "\"", with: "\\\"").replacingOccurrences(of: "\u{7}", with: "\\u0007"))\"}",
                                      profile: "prof\(Self.hostile)", mode: .run), masking: SecretRedactor())
        try journal.recordPending(runID: id, sequence: 1, key: "key" + Self.hostile, method: "POST", path: "/users/" + Self.hostile,
                                  bodySHA256: nil)
        try journal.recordFailed(runID: id, key: "key" + Self.hostile, httpStatus: 422, error: Self.hostile, masking: SecretRedactor())
        try journal.finishRun(id: id, status: .failed, exitCode: 1)
    }

    func testHostileTextIsShownAsText() throws {
        let console = try ConsoleFixture()
        try hostileRun(console.journal)
        let cookie = try console.signInWithToken()
        for target in ["/runs", "/runs/run%3C1%3E"] {
            let response = console.get(target, cookie: cookie)
            XCTAssertEqual(response.status, 200, target)
            let page = ConsoleFixture.text(response)
            XCTAssertFalse(page.contains("<script>alert"), target)
            XCTAssertFalse(page.contains("<img"), target)
            XCTAssertFalse(page.contains("\u{202E}"), target)
            XCTAssertFalse(page.contains("\u{7}"), target)
            XCTAssertTrue(page.contains(Self.hostileShown), target)
        }
        let run = ConsoleFixture.text(console.get("/runs/run%3C1%3E", cookie: cookie))
        XCTAssertTrue(run.contains("<h1>Run <span id=\"run-id\" class=\"mono\"><bdi>run&lt;1&gt;</bdi></span></h1>"))
        XCTAssertTrue(run.contains("<pre id=\"resume-command\">hubscript runs resume &#39;run&lt;1&gt;&#39;</pre>"), run)
        XCTAssertTrue(run.contains("<td class=\"num\">422</td>"))
        XCTAssertTrue(run.contains("id=\"run-status\" class=\"status status-failed\">failed (exit 1)</dd>"))
        let list = ConsoleFixture.text(console.get("/runs", cookie: cookie))
        XCTAssertTrue(list.contains("<a class=\"run-link\" href=\"/runs/run%3C1%3E\">"))
        XCTAssertTrue(list.contains("data-run-id=\"run&lt;1&gt;\""))
    }

    func testFiltersAndTheirMistakes() throws {
        let console = try ConsoleFixture()
        try hostileRun(console.journal, id: "a")
        try console.journal.startRun(RunStart(id: "b", recipePath: "/srv/b.lua", recipeSHA256: "ab", paramsJSON: "{}", profile: "p", mode: .plan), masking: SecretRedactor())
        let cookie = try console.signInWithToken()
        let failed = ConsoleFixture.text(console.get("/runs?status=failed", cookie: cookie))
        XCTAssertTrue(failed.contains("data-run-id=\"a\""))
        XCTAssertFalse(failed.contains("data-run-id=\"b\""))
        XCTAssertTrue(failed.contains("<option value=\"failed\" selected>failed</option>"))
        let planRuns = ConsoleFixture.text(console.get("/runs?mode=plan", cookie: cookie))
        XCTAssertTrue(planRuns.contains("data-run-id=\"b\""))
        XCTAssertFalse(planRuns.contains("data-run-id=\"a\""))
        // The plans page lists saved plans (recorded by plan --out), not plan runs.
        XCTAssertTrue(ConsoleFixture.text(console.get("/plans", cookie: cookie)).contains("<p id=\"plans-empty\""))
        let bad: [(String, String)] = [
            ("/runs?status=%3Cb%3E", "status must be one of running, interrupted, succeeded, failed, stopped"),
            ("/runs?mode=x", "mode must be one of run, plan, apply"),
            ("/runs?from=2026-02-30", "from must be a day such as 2026-03-08"),
            ("/runs?to=yesterday", "to must be a day such as 2026-03-08"),
            ("/runs?after=zzz", "after must be the cursor of a next-page link; start again from the first page"),
            ("/runs?limit=0", "limit must be a whole number from 1 to 80"),
            ("/runs?job=a&trigger=b", "a run comes from a job or from a trigger, not both: choose one"),
        ]
        for (target, message) in bad {
            let response = console.get(target, cookie: cookie)
            XCTAssertEqual(response.status, 400, target)
            XCTAssertTrue(ConsoleFixture.text(response).contains("<p>\(message)</p>"), target)
        }
        XCTAssertEqual(console.get("/runs/nope", cookie: cookie).status, 404)
        XCTAssertEqual(console.get("/jobs/nope", cookie: cookie).status, 404)
    }

    func testPagesStayUnder100KB() throws {
        let console = try ConsoleFixture()
        let long = String(repeating: "\u{202E}<x>", count: 5000)
        for i in 0..<250 {
            try console.journal.startRun(RunStart(id: "r\(i)" + String(repeating: "i", count: 100), recipePath: long, recipeSHA256: "ab",
                                                  paramsJSON: "{}", profile: long, mode: .run), masking: SecretRedactor())
        }
        let id = "r0" + String(repeating: "i", count: 100)
        for i in 1...300 {
            try console.journal.recordPending(runID: id, sequence: i, key: "k\(i)", method: "POST", path: "/x/" + long, bodySHA256: nil)
        }
        let cookie = try console.signInWithToken()
        for target in ["/runs?limit=80", "/runs/" + id, "/runs/\(id)?wpage=6"] {
            let response = console.get(target, cookie: cookie)
            XCTAssertEqual(response.status, 200, target)
            XCTAssertLessThan(response.body.count, 100_000, target)
        }
        XCTAssertTrue(ConsoleFixture.text(console.get("/runs/\(id)?wpage=6", cookie: cookie)).contains("251–300 of 300"))
    }

    func testJobsAndTriggersPages() throws {
        let console = try ConsoleFixture(jobs: [try ConsoleFixture.job()], triggers: [
            ConfiguredTrigger(name: "offboard", on: ["user.suspended"], recipe: URL(fileURLWithPath: "/srv/off.lua"), profile: nil, secret: "webhooks/hub"),
        ])
        try console.journal.startRun(RunStart(id: "nightly@2026-11-30T02:00:00Z", recipePath: "/srv/recipes/sync.lua", recipeSHA256: "ab",
                                              paramsJSON: "{}", profile: "p", mode: .run), masking: SecretRedactor())
        try console.journal.recordFire(NewFire(job: "nightly", scheduledAt: Date(timeIntervalSince1970: 1_796_000_000),
                                               runID: "nightly@2026-11-30T02:00:00Z", status: .failed, reason: Self.hostile))
        _ = try console.journal.recordTriggerEvent(eventID: "wev_<1>", trigger: "offboard", eventType: "user.suspended", body: "{}",
                                                   runID: "offboard@wev_<1>")
        _ = try console.journal.recordTriggerEvent(eventID: "wev_<1>", trigger: "offboard", eventType: "user.suspended", body: "{}",
                                                   runID: "offboard@wev_<1>")
        let cookie = try console.signInWithToken()
        let jobs = ConsoleFixture.text(console.get("/jobs", cookie: cookie))
        XCTAssertTrue(jobs.contains("<td class=\"mono\">0 3 * * *</td><td>Europe/Paris</td><td>2026-12-01T03:00:00+01:00</td>"), jobs)
        XCTAssertTrue(jobs.contains("<td class=\"status status-failed\">failed</td>"))
        let job = ConsoleFixture.text(console.get("/jobs/nightly", cookie: cookie))
        XCTAssertTrue(job.contains("<dd id=\"job-next\">2026-12-01T03:00:00+01:00</dd>"))
        XCTAssertTrue(job.contains(Self.hostileShown))
        XCTAssertTrue(job.contains("href=\"/runs/nightly%402026-11-30T02%3A00%3A00Z\""))
        XCTAssertEqual(console.get("/jobs/nightly?status=nope", cookie: cookie).status, 400)
        XCTAssertTrue(ConsoleFixture.text(console.get("/jobs/nightly?status=missed", cookie: cookie)).contains("No fires recorded."))
        let triggers = ConsoleFixture.text(console.get("/triggers", cookie: cookie))
        XCTAssertTrue(triggers.contains("data-event-id=\"wev_&lt;1&gt;\""))
        XCTAssertTrue(triggers.contains("<td class=\"num\">2</td><td class=\"num\">1</td>"), "two deliveries, one duplicate")
        XCTAssertTrue(triggers.contains("<td class=\"status status-received\">received</td>"))
    }

    func testServerSentEventsFraming() {
        XCTAssertEqual(LiveRunEvents.event("run", id: "1-2", data: "a\nb\r\nc\rd"), "event: run\nid: 1-2\ndata: a\ndata: b\ndata: c\ndata: d\n\n")
        XCTAssertEqual(LiveRunEvents.event("run\nid: x", id: "1\r\n2", data: ""), "event: runid: x\nid: 12\ndata: \n\n")
        XCTAssertEqual(LiveRunEvents.event("done", id: "x", data: "\n\n"), "event: done\nid: x\ndata: \ndata: \ndata: \n\n")
    }

    func testTheLiveViewAnswersAChangeAndEndsWithDone() throws {
        let console = try ConsoleFixture(liveWait: 20)
        try console.journal.startRun(RunStart(id: "live", recipePath: "/srv/l.lua", recipeSHA256: "ab", paramsJSON: "{}", profile: "p", mode: .run), masking: SecretRedactor())
        console.locks.hold("live")
        let cookie = try console.signInWithToken()
        let page = ConsoleFixture.text(console.get("/runs/live", cookie: cookie))
        XCTAssertTrue(page.contains("<section id=\"run-live\" data-events=\"/runs/live/events\">"))

        let first = console.get("/runs/live/events", cookie: cookie)
        XCTAssertEqual(first.status, 200)
        XCTAssertEqual(first.headers["Content-Type"], "text/event-stream; charset=utf-8")
        let firstText = ConsoleFixture.text(first)
        XCTAssertTrue(firstText.hasPrefix("retry: 250\nevent: run\nid: "), firstText)
        let id = try XCTUnwrap(firstText.split(separator: "\n").first { $0.hasPrefix("id: ") }?.dropFirst(4))

        // Nothing new: the request waits; a write journalled meanwhile is answered.
        let journal = console.journal
        let writer = Thread {
            Thread.sleep(forTimeInterval: 0.2)
            try? journal.recordPending(runID: "live", sequence: 1, key: "k1", method: "POST", path: "/users/<x>", bodySHA256: nil)
        }
        writer.start()
        let second = ConsoleFixture.text(console.get("/runs/live/events", cookie: cookie, headers: [("Last-Event-ID", String(id))]))
        XCTAssertTrue(second.contains("event: run\n"), second)
        XCTAssertFalse(second.contains("id: \(id)\n"))
        XCTAssertTrue(second.contains("/users/&lt;x&gt;"))

        // The run's process is gone: `done`, and the script stops listening.
        console.locks.release("live")
        let done = ConsoleFixture.text(console.get("/runs/live/events", cookie: cookie))
        XCTAssertTrue(done.contains("event: done\n"), done)
        XCTAssertTrue(done.contains("status-interrupted"))
        XCTAssertEqual(console.get("/runs/nope/events", cookie: cookie).status, 404)
    }

    func testTheLiveViewSaysNothingNewWhenNothingChanged() throws {
        let console = try ConsoleFixture(liveWait: 0.1)
        try console.journal.startRun(RunStart(id: "quiet", recipePath: "/srv/q.lua", recipeSHA256: "ab", paramsJSON: "{}", profile: "p", mode: .run), masking: SecretRedactor())
        console.locks.hold("quiet")
        let cookie = try console.signInWithToken()
        let first = ConsoleFixture.text(console.get("/runs/quiet/events", cookie: cookie))
        let id = try XCTUnwrap(first.split(separator: "\n").first { $0.hasPrefix("id: ") }?.dropFirst(4))
        let again = ConsoleFixture.text(console.get("/runs/quiet/events", cookie: cookie, headers: [("Last-Event-ID", String(id))]))
        XCTAssertEqual(again, "retry: 250\n: nothing new\n\n")
    }

    func testWhatARequestSaysIsEscapedWhereItIsShown() throws {
        let console = try ConsoleFixture(jobs: [try ConsoleFixture.job()])
        let cookie = try console.signInWithToken()
        let missing = console.get("/%3Cscript%3Ealert(1)%3C%2Fscript%3E", cookie: cookie)
        XCTAssertEqual(missing.status, 404)
        XCTAssertTrue(ConsoleFixture.text(missing).contains("<p>no page /&lt;script&gt;alert(1)&lt;/script&gt; (start from the runs page)</p>"))
        let run = console.get("/runs/a%2F%3Cb%3E", cookie: cookie)
        XCTAssertEqual(run.status, 404)
        XCTAssertTrue(ConsoleFixture.text(run).contains("<p>the journal holds no run a/&lt;b&gt;</p>"))
        let filtered = ConsoleFixture.text(console.get("/runs?recipe=%22%3E%3Cscript%3Ex&profile=%27%20onfocus%3Dx", cookie: cookie))
        XCTAssertTrue(filtered.contains("name=\"recipe\" id=\"filter-recipe\" value=\"&quot;&gt;&lt;script&gt;x\""), filtered)
        XCTAssertTrue(filtered.contains("value=\"&#39; onfocus=x\""), filtered)
        XCTAssertTrue(filtered.contains("<p id=\"runs-empty\" class=\"muted\">No runs match.</p>"))
        let job = ConsoleFixture.text(console.get("/jobs/nightly?fired=%3Cimg%20src%3Dx%3E", cookie: cookie))
        XCTAssertTrue(job.contains("Fired: <a id=\"fired-run\" href=\"/runs/%3Cimg%20src%3Dx%3E\"><bdi>&lt;img src=x&gt;</bdi></a>"), job)
    }

    func testAWaitingLiveViewAnswersWhenTheConsoleStops() throws {
        let console = try ConsoleFixture(liveWait: 600)
        try console.journal.startRun(RunStart(id: "long", recipePath: "/srv/l.lua", recipeSHA256: "ab", paramsJSON: "{}", profile: "p", mode: .run), masking: SecretRedactor())
        console.locks.hold("long")
        let cookie = try console.signInWithToken()
        let first = ConsoleFixture.text(console.get("/runs/long/events", cookie: cookie))
        let id = try XCTUnwrap(first.split(separator: "\n").first { $0.hasPrefix("id: ") }?.dropFirst(4))
        let server = console.server
        Thread { Thread.sleep(forTimeInterval: 0.2); server.beginStopping() }.start()
        // Without the stop this would wait ten minutes (the test would time out).
        let answer = ConsoleFixture.text(console.get("/runs/long/events", cookie: cookie, headers: [("Last-Event-ID", String(id))]))
        XCTAssertEqual(answer, "retry: 250\n: nothing new\n\n")
    }

    func testRunningAndInterruptedAreToldApartByTheLock() throws {
        let console = try ConsoleFixture()
        for id in ["alive", "dead"] {
            try console.journal.startRun(RunStart(id: id, recipePath: "/srv/x.lua", recipeSHA256: "ab", paramsJSON: "{}", profile: "p", mode: .run), masking: SecretRedactor())
        }
        console.locks.hold("alive")
        let cookie = try console.signInWithToken()
        let running = ConsoleFixture.text(console.get("/runs?status=running", cookie: cookie))
        XCTAssertTrue(running.contains("data-run-id=\"alive\""))
        XCTAssertFalse(running.contains("data-run-id=\"dead\""))
        let interrupted = ConsoleFixture.text(console.get("/runs?status=interrupted", cookie: cookie))
        XCTAssertTrue(interrupted.contains("data-run-id=\"dead\""))
        XCTAssertFalse(interrupted.contains("data-run-id=\"alive\""))
        XCTAssertTrue(interrupted.contains("<option value=\"interrupted\" selected>interrupted</option>"))
        XCTAssertTrue(ConsoleFixture.text(console.get("/runs/dead", cookie: cookie))
            .contains("<pre id=\"resume-command\">hubscript runs resume dead</pre>"))
        XCTAssertFalse(ConsoleFixture.text(console.get("/runs/alive", cookie: cookie)).contains("resume-command"))
    }
}
