import Foundation
import RunJournal
import SystemText

/// `/runs/ID`: one run — what started it, where it stands (live while it runs), its
/// writes in order (paged, `?wpage=N`), what it said (its kept output), its exports and
/// the command that resumes it.
struct RunPage {
    let context: ConsoleContext

    /// Writes a page shows.
    static let writesPerPage = 50

    func render(id: String, writesPage: Int) throws -> (String, HTML)? {
        guard let activity = try context.journal.runActivity(id: id) else { return nil }
        let r = activity.run
        let status = context.status(r)
        var body: HTML = """
            <h1>Run <span id="run-id" class="mono">\(HTML.field(r.id))</span></h1>
            <dl id="run-facts" class="facts">\
            <dt>Recipe</dt><dd class="mono" id="run-recipe">\(HTML.field(r.recipePath)) <span class="muted">sha256 \(String(r.recipeSHA256.prefix(16)))…</span></dd>\
            <dt>Profile</dt><dd id="run-profile">\(HTML.field(r.profile, budget: 500))</dd>\
            <dt>Mode</dt><dd id="run-mode">\(r.mode.rawValue)</dd>\
            <dt>Started</dt><dd>\(Layout.time(r.startedAt))</dd>\
            <dt>Limits</dt><dd>\(r.maxWrites.map { "max writes \($0)" } ?? "no --max-writes"), \
            \(r.timeoutSeconds.map { "timeout \(Self.seconds($0)) s" } ?? "the manifest's timeout")</dd>\
            </dl>
            <h2>Parameters</h2><pre id="run-params">\(HTML.text(r.paramsJSON, budget: 8000))</pre>
            """
        if let resume = Self.resumeCommand(r, status: status) {
            body += "<h2>Resume</h2><p>This run can be resumed: its journalled writes replay, the rest are sent.</p><pre id=\"resume-command\">\(resume)</pre>"
        }
        let live = liveFragment(activity, status: status, writesPage: writesPage)
        let events = "/runs/\(URLText.component(r.id))/events" + (writesPage > 1 ? "?wpage=\(writesPage)" : "")
        if r.status == .running && status == "running" {
            body += "<p id=\"live-state\" class=\"muted\" data-live=\"off\">This run is in progress; with JavaScript this page follows it.</p>"
            body += "<section id=\"run-live\" data-events=\"\(events)\">\(live)</section>"
        } else {
            body += "<section id=\"run-live\">\(live)</section>"
        }
        body += exports(r)
        return ("Run " + r.id, body)
    }

    /// The part of the page a live view redraws: status, counts, and the writes page.
    func liveFragment(_ activity: RunActivity, status: String, writesPage: Int) -> HTML {
        let r = activity.run
        let c = r.counts
        var html: HTML = """
            <dl id="run-state" class="facts">\
            <dt>Status</dt><dd id="run-status" class="status status-\(status)">\(status)\(r.exitCode.map { " (exit \($0))" } ?? "")</dd>\
            <dt>Attempts</dt><dd id="run-attempts">\(r.attempts)</dd>\
            <dt>Finished</dt><dd id="run-finished">\(Layout.time(r.finishedAt))</dd>\
            <dt>Counts</dt><dd id="run-counts">\(c.reads) reads, \(c.writes) writes, \(c.replayed) replayed, \
            \(c.planned) planned, \(c.failed) failed (every pass)</dd></dl>
            """
        html += writesSection(r.id, total: activity.writeCount, page: writesPage)
        html += outputSection(r.id)
        return html
    }

    func writesSection(_ runID: String, total: Int, page: Int) -> HTML {
        guard total > 0 else { return "<h2>Writes</h2><p id=\"writes-empty\" class=\"muted\">No writes.</p>" }
        let per = Self.writesPerPage
        let pages = (total + per - 1) / per
        let page = min(max(1, page), pages)
        let offset = (page - 1) * per
        let writes = (try? context.journal.writesPage(runID: runID, offset: offset, limit: per)) ?? []
        let rows = writes.enumerated().map { index, w -> HTML in
            """
            <tr class="write write-\(w.state.rawValue)"><td class="num">\(offset + index + 1)</td>\
            <td class="status status-\(w.state.rawValue)">\(w.state.rawValue)</td><td class="num">\(w.attempts)</td>\
            <td class="mono">\(HTML.field(w.method, budget: 40))</td><td class="mono">\(HTML.field(w.path, budget: 300))</td>\
            <td class="num">\(w.httpStatus.map(String.init) ?? "—")</td><td class="mono">\(HTML.field(w.key, budget: 160))</td>\
            <td>\(HTML.field(w.error ?? "", budget: 300))</td></tr>
            """
        }
        var pager: HTML = ""
        let base = "/runs/\(URLText.component(runID))"
        if page > 1 { pager += "<a id=\"writes-previous\" href=\"\(base)?wpage=\(page - 1)\">Previous writes</a>" }
        if page < pages { pager += "<a id=\"writes-next\" href=\"\(base)?wpage=\(page + 1)\">Next writes</a>" }
        return """
            <h2>Writes <span class="muted" id="writes-range">\(offset + 1)–\(offset + writes.count) of \(total), \
            in the order the run first made them</span></h2>
            <table id="writes-table"><thead><tr><th class="num">#</th><th>State</th><th class="num">Tries</th><th>Method</th>\
            <th>Path</th><th class="num">HTTP</th><th>Key</th><th>Error</th></tr></thead><tbody>
            \(rows)</tbody></table><div class="pager">\(pager)</div>
            """
    }

    private func exports(_ r: RunRecord) -> HTML {
        guard let folder = r.outputFolder else { return "<h2>Exports</h2><p id=\"exports-none\" class=\"muted\">None.</p>" }
        let files = Self.files(in: folder, limit: 50)
        let rows = files.map { name, size -> HTML in
            "<tr class=\"export\"><td class=\"mono\">\(HTML.field(name))</td><td class=\"num\">\(size)</td></tr>"
        }
        let list: HTML = files.isEmpty ? "<p class=\"muted\">The folder holds no files (or is gone).</p>" : """
            <table id="exports-table"><thead><tr><th>File</th><th class="num">Bytes</th></tr></thead><tbody>\(rows)</tbody></table>
            """
        return "<h2>Exports</h2><p>In <span class=\"mono\" id=\"exports-folder\">\(HTML.field(folder, budget: 1000))</span></p>\(list)"
    }

    /// Up to `limit` regular files under `folder` (paths relative to it, sorted) and their
    /// sizes, looking at no more than `20 × limit` entries.
    static func files(in folder: String, limit: Int) -> [(String, Int)] {
        let root = URL(fileURLWithPath: folder)
        guard let walker = FileManager.default.enumerator(at: root, includingPropertiesForKeys: [.isRegularFileKey, .fileSizeKey],
                                                          options: [.skipsHiddenFiles]) else { return [] }
        var out: [(String, Int)] = []
        var visited = 0
        for case let url as URL in walker {
            visited += 1
            // Bounded by entries seen, not only by files found: a folder of folders ends too.
            guard out.count < limit, visited <= limit * 20 else { break }
            let values = try? url.resourceValues(forKeys: [.isRegularFileKey, .fileSizeKey])
            guard values?.isRegularFile == true else { continue }
            let name = url.path.hasPrefix(root.path + "/") ? String(url.path.dropFirst(root.path.count + 1)) : url.lastPathComponent
            out.append((name, values?.fileSize ?? 0))
        }
        return out.sorted { $0.0 < $1.0 }
    }

    /// `hubscript runs resume 'ID'` for a run that stopped short, nil otherwise.
    static func resumeCommand(_ r: RunRecord, status: String) -> String? {
        guard r.mode != .plan, ["failed", "stopped", "interrupted"].contains(status) else { return nil }
        return "hubscript runs resume " + shellQuoted(r.id)
    }

    /// `text` as one POSIX shell word (`ShellWord.quoted`).
    static func shellQuoted(_ text: String) -> String { ShellWord.quoted(text) }

    static func seconds(_ s: Double) -> String {
        s == s.rounded() && abs(s) < 1e15 ? String(Int64(s)) : String(s)
    }
}
