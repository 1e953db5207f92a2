import Foundation
import RunJournal

/// `/runs` (and `/`, `/plans`): the journal's runs, newest first, filtered and paged.
///
/// Query items: `status` (running, interrupted, succeeded, failed, stopped: as the
/// table shows them, `running` and `interrupted` told apart by the run's lock), `mode` (run, plan,
/// apply), `recipe` (part of its path), `profile`, `job`, `trigger`, `from` and `to`
/// (days, `YYYY-MM-DD`, UTC, both included), `after` (the next-page cursor) and
/// `limit` (1–80, default 50; a page stays under 100 KB).
struct RunsPage {
    let context: ConsoleContext

    static let defaultLimit = 50
    /// The statuses a filter names: the journal's, and `interrupted` (running, its process gone).
    static let statuses = ["running", "interrupted", "succeeded", "failed", "stopped"]
    static let maxLimit = 80

    /// The query a request asks for, or what is wrong with it.
    static func query(_ items: [(name: String, value: String)]) -> Result<RunQuery, ConsoleProblem> {
        var query = RunQuery(limit: defaultLimit)
        for (name, value) in items where !value.isEmpty {
            switch name {
            case "status":
                guard let status = value == "interrupted" ? .running : RunStatus(rawValue: value) else {
                    return .failure(.badFilter("status must be one of \(statuses.joined(separator: ", "))"))
                }
                query.status = status
            case "mode":
                guard let mode = RunMode(rawValue: value) else {
                    return .failure(.badFilter("mode must be one of \(RunMode.allCases.map(\.rawValue).joined(separator: ", "))"))
                }
                query.mode = mode
            case "recipe": query.recipe = value
            case "profile": query.profile = value
            case "job": query.job = value
            case "trigger": query.trigger = value
            case "from":
                guard let day = day(value) else { return .failure(.badFilter("from must be a day such as 2026-03-08")) }
                query.startedFrom = day
            case "to":
                guard let day = day(value) else { return .failure(.badFilter("to must be a day such as 2026-03-08")) }
                query.startedBefore = day.addingTimeInterval(86_400)
            case "after":
                guard let cursor = RunCursor(text: value) else {
                    return .failure(.badFilter("after must be the cursor of a next-page link; start again from the first page"))
                }
                query.after = cursor
            case "limit":
                guard let limit = Int(value), (1...maxLimit).contains(limit) else {
                    return .failure(.badFilter("limit must be a whole number from 1 to \(maxLimit)"))
                }
                query.limit = limit
            default: continue
            }
        }
        if query.job != nil, query.trigger != nil {
            return .failure(.badFilter("a run comes from a job or from a trigger, not both: choose one"))
        }
        return .success(query)
    }

    /// Midnight UTC of `YYYY-MM-DD`.
    static func day(_ text: String) -> Date? {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]),
              (1970...9999).contains(y), (1...12).contains(m), (1...31).contains(d) else { return nil }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        let components = DateComponents(year: y, month: m, day: d)
        guard let date = calendar.date(from: components),
              calendar.dateComponents([.day], from: date).day == d else { return nil }
        return date
    }

    func render(_ items: [(name: String, value: String)], path: String, plans: Bool) throws -> Result<(String, HTML), ConsoleProblem> {
        var query: RunQuery
        switch Self.query(items) {
        case .failure(let problem): return .failure(problem)
        case .success(let q): query = q
        }
        if plans { query.mode = .plan }
        var page = try context.journal.runsPage(query)
        let value = { (name: String) in items.first { $0.name == name }?.value ?? "" }
        // Running and interrupted are one status in the journal: the lock tells them apart.
        if query.status == .running {
            let wanted = value("status")
            page.runs = page.runs.filter { context.status($0) == wanted }
        }
        let title = plans ? "Plans" : "Runs"
        var body: HTML = "<h1>\(title)</h1>"
        body += filters(value, path: path, plans: plans)
        body += table(page.runs)
        var pager: HTML = ""
        if query.after != nil {
            pager += "<a id=\"first-page\" href=\"\(URLText.link(path, kept(items, without: "after")))\">First page</a>"
        }
        if let next = page.next {
            pager += "<a id=\"next-page\" href=\"\(URLText.link(path, kept(items, without: "after") + [("after", next.text)]))\">Older runs</a>"
        }
        body += "<div class=\"pager\">\(pager)</div>"
        return .success((title, body))
    }

    private func kept(_ items: [(name: String, value: String)], without name: String) -> [(String, String)] {
        items.filter { $0.name != name && $0.name != "token" }.map { ($0.name, $0.value) }
    }

    private func filters(_ value: (String) -> String, path: String, plans: Bool) -> HTML {
        func select(_ name: String, _ options: [String]) -> HTML {
            let current = value(name)
            let choices = ([""] + options).map { option -> HTML in
                let label = option.isEmpty ? "any" : option
                return option == current ? "<option value=\"\(option)\" selected>\(label)</option>" : "<option value=\"\(option)\">\(label)</option>"
            }
            return "<label>\(name)<select name=\"\(name)\" id=\"filter-\(name)\">\(choices)</select></label>"
        }
        func field(_ name: String, _ type: String = "text") -> HTML {
            "<label>\(name)<input type=\"\(type)\" name=\"\(name)\" id=\"filter-\(name)\" value=\"\(value(name))\"></label>"
        }
        return """
            <form id="runs-filters" class="filters" method="get" action="\(path)">\
            \(select("status", Self.statuses))\
            \(plans ? "" : select("mode", RunMode.allCases.map(\.rawValue)))\
            \(field("recipe"))\(field("profile"))\(field("job"))\(field("trigger"))\
            \(field("from", "date"))\(field("to", "date"))\
            <button type="submit" id="filter-apply">Filter</button></form>
            """
    }

    func table(_ runs: [RunRecord]) -> HTML {
        guard !runs.isEmpty else { return "<p id=\"runs-empty\" class=\"muted\">No runs match.</p>" }
        let rows = runs.map { r -> HTML in
            let status = context.status(r)
            return """
                <tr class="run" data-run-id="\(r.id)"><td class="mono"><a class="run-link" href="/runs/\(URLText.component(r.id))">\(HTML.field(r.id, budget: 200))</a></td>\
                <td class="status status-\(status)">\(status)</td><td>\(r.mode.rawValue)</td>\
                <td class="mono">\(HTML.field(r.recipePath, budget: 200))</td><td>\(HTML.field(r.profile, budget: 80))</td>\
                <td>\(Layout.time(r.startedAt))</td><td>\(Layout.time(r.finishedAt))</td>\
                <td class="num">\(r.counts.writes)</td><td class="num">\(r.counts.replayed)</td>\
                <td class="num">\(r.counts.planned)</td><td class="num">\(r.counts.failed)</td></tr>
                """
        }
        return """
            <table id="runs-table"><thead><tr><th>Run</th><th>Status</th><th>Mode</th><th>Recipe</th><th>Profile</th>\
            <th>Started</th><th>Finished</th><th class="num">Writes</th><th class="num">Replayed</th>\
            <th class="num">Planned</th><th class="num">Failed</th></tr></thead><tbody>
            \(rows)</tbody></table>
            """
    }
}

/// A request the console cannot answer as asked, and what to do.
enum ConsoleProblem: Error, Equatable {
    case badFilter(String)
    case notFound(String)

    var status: Int {
        switch self {
        case .badFilter: 400
        case .notFound: 404
        }
    }

    var title: String {
        switch self {
        case .badFilter: "Bad filter"
        case .notFound: "Not found"
        }
    }

    var message: String {
        switch self {
        case .badFilter(let text), .notFound(let text): text
        }
    }
}
