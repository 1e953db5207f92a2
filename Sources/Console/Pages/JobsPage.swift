import Foundation
import Configuration
import RunJournal

/// `/jobs`: each job of the configuration — schedule, time zone, next and last fire —
/// and `/jobs/NAME`: one job, its "fire now" button and its history (`?status=`,
/// `?offset=`).
struct JobsPage {
    let context: ConsoleContext

    static let historyPerPage = 50

    func list() throws -> HTML {
        let jobs = context.jobs.jobs
        guard !jobs.isEmpty else {
            let source = context.jobs.source.map { "\($0.path) defines no jobs" } ?? "no configuration file was found"
            return "<h1>Jobs</h1><p id=\"jobs-empty\" class=\"muted\">No jobs: \(source).</p>"
        }
        let now = context.clock()
        let rows = try jobs.map { job -> HTML in
            let schedule = job.definition.schedule
            let next = schedule.nextFire(after: now)
            let last = try context.journal.fires(job: job.name, limit: 1).first
            return """
                <tr class="job" data-job="\(job.name)"><td><a class="job-link" href="/jobs/\(URLText.component(job.name))">\(HTML.field(job.name))</a></td>\
                <td class="mono">\(HTML.field(job.shownRecipe))</td><td class="mono">\(schedule.expression)</td>\
                <td>\(schedule.timeZoneName)</td><td>\(next.map { Layout.local($0, schedule.timeZone) } ?? "never")</td>\
                <td>\(last.map { Layout.local($0.missedThrough ?? $0.scheduledAt, schedule.timeZone) } ?? "—")</td>\
                \(last.map(outcomeCell) ?? "<td>—</td>")</tr>
                """
        }
        return """
            <h1>Jobs</h1>
            <table id="jobs-table"><thead><tr><th>Job</th><th>Recipe</th><th>Schedule</th><th>Time zone</th>\
            <th>Next fire</th><th>Last fire</th><th>Outcome</th></tr></thead><tbody>
            \(rows)</tbody></table>
            """
    }

    /// The page of job `name`, nil if the configuration has no such job.
    func job(_ name: String, items: [(name: String, value: String)], csrf: String, notice: HTML?) throws -> Result<HTML, ConsoleProblem>? {
        guard let job = context.jobs.jobs.first(where: { $0.name == name }) else { return nil }
        let value = { (key: String) in items.first { $0.name == key }?.value ?? "" }
        var status: FireStatus?
        if !value("status").isEmpty {
            guard let s = FireStatus(rawValue: value("status")) else {
                return .failure(.badFilter("status must be one of \(FireStatus.allCases.map(\.rawValue).joined(separator: ", "))"))
            }
            status = s
        }
        let offset = max(0, Int(value("offset")) ?? 0)
        let d = job.definition
        let schedule = d.schedule
        let next = schedule.nextFire(after: context.clock())
        var body: HTML = "<h1>Job <span id=\"job-name\">\(HTML.field(job.name))</span></h1>"
        if let notice { body += "<p id=\"notice\" class=\"notice\">\(notice)</p>" }
        body += """
            <dl id="job-facts" class="facts">\
            <dt>Recipe</dt><dd class="mono">\(HTML.field(job.shownRecipe))</dd>\
            <dt>Schedule</dt><dd class="mono" id="job-schedule">\(schedule.expression)</dd>\
            <dt>Time zone</dt><dd id="job-zone">\(schedule.timeZoneName)</dd>\
            <dt>Next fire</dt><dd id="job-next">\(next.map { Layout.local($0, schedule.timeZone) } ?? "never")</dd>\
            <dt>Profile</dt><dd>\(HTML.field(d.profile ?? "the default"))</dd>\
            <dt>Overlap</dt><dd>\(d.overlap.rawValue)</dd><dt>Catch-up</dt><dd>\(d.catchUp.description)</dd></dl>
            """
        if context.actions != nil {
            body += """
                <form id="fire-form" method="post" action="/jobs/\(URLText.component(job.name))/fire" \
                data-confirm="Fire \(job.name) now?">\(Layout.csrfField(csrf))\
                <button type="submit" id="fire-now">Fire now</button> <span class="muted">Needs a signed-in Hub user \
                with the permissions the job's recipe needs; the fire is recorded like one by hand (hubscript jobs run).</span></form>
                """
        }
        let fires = try context.journal.firesPage(job: job.name, status: status, offset: offset, limit: Self.historyPerPage + 1)
        let shown = Array(fires.prefix(Self.historyPerPage))
        let options = ([""] + FireStatus.allCases.map(\.rawValue)).map { option -> HTML in
            option == value("status") ? "<option value=\"\(option)\" selected>\(option.isEmpty ? "any" : option)</option>"
                : "<option value=\"\(option)\">\(option.isEmpty ? "any" : option)</option>"
        }
        body += """
            <h2>History</h2>
            <form id="history-filters" class="filters" method="get" action="/jobs/\(URLText.component(job.name))">\
            <label>status<select name="status" id="filter-status">\(options)</select></label>\
            <button type="submit">Filter</button></form>
            """
        body += history(shown, zone: schedule.timeZone)
        let base = "/jobs/" + URLText.component(job.name)
        var pager: HTML = ""
        if offset > 0 {
            pager += "<a id=\"history-newer\" href=\"\(URLText.link(base, [("status", value("status")), ("offset", String(max(0, offset - Self.historyPerPage)))]))\">Newer</a>"
        }
        if fires.count > Self.historyPerPage {
            pager += "<a id=\"history-older\" href=\"\(URLText.link(base, [("status", value("status")), ("offset", String(offset + Self.historyPerPage))]))\">Older</a>"
        }
        body += "<div class=\"pager\">\(pager)</div>"
        return .success(body)
    }

    private func history(_ fires: [FireRecord], zone: TimeZone) -> HTML {
        guard !fires.isEmpty else { return "<p id=\"history-empty\" class=\"muted\">No fires recorded.</p>" }
        let rows = fires.map { f -> HTML in
            let scheduled = Layout.local(f.scheduledAt, zone) + (f.missedThrough.map { " – " + Layout.local($0, zone) } ?? "")
            let reason = [f.reason, f.notified.map { "on_failure: \($0)" }].compactMap { $0 }.joined(separator: "; ")
            let run: HTML = f.status == .missed ? "\(HTML.field(f.runID, budget: 200))"
                : "<a class=\"run-link\" href=\"/runs/\(URLText.component(f.runID))\">\(HTML.field(f.runID, budget: 200))</a>"
            return """
                <tr class="fire" data-status="\(f.status.rawValue)"><td class="mono">\(run)</td>\(outcomeCell(f))\
                <td>\(f.trigger.rawValue)</td><td>\(scheduled)</td><td>\(Layout.time(f.startedAt))</td>\
                <td class="num">\(Layout.duration(f.durationMs))</td><td class="num">\(f.exitCode.map(String.init) ?? "—")</td>\
                <td>\(HTML.field(reason, budget: 400))</td></tr>
                """
        }
        return """
            <table id="history-table"><thead><tr><th>Run</th><th>Outcome</th><th>Trigger</th><th>Scheduled</th><th>Started</th>\
            <th class="num">Duration</th><th class="num">Exit</th><th>Reason</th></tr></thead><tbody>
            \(rows)</tbody></table>
            """
    }

    /// The outcome as `jobs list` tells it: a queued or fired row is running, queued or
    /// interrupted by its lock.
    private func outcomeCell(_ f: FireRecord) -> HTML {
        let shown: String
        switch f.status {
        case .queued, .fired: shown = context.locks.isHeld(f.runID) ? (f.status == .queued ? "queued" : "running") : "interrupted"
        default: shown = f.status.rawValue
        }
        return "<td class=\"status status-\(shown)\">\(shown)</td>"
    }
}
