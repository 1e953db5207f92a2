import Foundation
import RunJournal

extension RunPage {
    /// Lines of a run's kept output a page shows: the last ones, where a run's outcome is.
    static let outputLines = 200

    /// The run's kept output (`runs show ID --output`), its last `outputLines` lines, each
    /// with its attempt, time and kind; part of the live fragment, so a running run's page
    /// follows what it says. Every line is recipe text: escaped, and cut at a budget so a
    /// page stays small.
    func outputSection(_ runID: String) -> HTML {
        let totals = (try? context.journal.outputTotals(runID: runID)) ?? RunOutputTotals()
        guard totals.lines > 0 else {
            return "<h2>Output</h2><p id=\"run-output-empty\" class=\"muted\">Nothing said yet.</p>"
        }
        let lines = (try? context.journal.outputTail(runID: runID, count: Self.outputLines)) ?? []
        var html: HTML = "<h2>Output</h2>"
        if totals.lines > lines.count {
            html += """
                <p id="run-output-more" class="muted">The last \(lines.count) of \(totals.lines) lines; \
                all of them: <span class="mono">hubscript runs show \(HTML.text(runID, budget: 300)) --output</span></p>
                """
        }
        let items = lines.map { line -> HTML in
            """
            <li class="out out-\(HTML.text(line.kindName, budget: 40))" data-attempt="\(line.attempt)">\
            <span class="muted">\(Layout.time(line.time))</span> \
            <span class="kind">\(HTML.text(line.kindName, budget: 40))</span> \
            <span class="text">\(HTML.field(line.text, budget: 2000))</span></li>
            """
        }
        html += "<ol id=\"run-output\" class=\"output\">\(items)</ol>"
        return html
    }
}
