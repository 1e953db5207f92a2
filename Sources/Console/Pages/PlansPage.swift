import Foundation
import RunJournal

/// `/plans`: the saved plans the journal holds (`hubscript plan --out`), newest first,
/// with maker, approvals and status; `/plans/ID`: one plan with its writes as a table,
/// every decision, and the Approve and Reject forms (docs/approvals.md).
///
/// The approvals shown as required are those `hubscript apply` would require now: the
/// larger of those recorded with the plan and those the rules in force ask
/// (`ConsoleContext.requiredApprovals`).
struct PlansPage {
    let context: ConsoleContext

    /// Plans the list shows.
    static let limit = 200

    func list() throws -> HTML {
        let plans = try context.journal.plans(limit: Self.limit)
        var body: HTML = "<h1>Plans</h1>"
        guard !plans.isEmpty else {
            return body + """
                <p id="plans-empty" class="muted">No plans recorded. <code>hubscript plan RECIPE --out PLAN.json</code> \
                records one here, waiting for its approvals.</p>
                """
        }
        let rows = plans.map { p -> HTML in
            let required = context.requiredApprovals(p)
            let status = p.shownStatus(required: required)
            let link = "/plans/\(URLText.component(p.id))"
            return """
                <tr class="plan" data-plan-id="\(p.id)"><td class="mono"><a class="plan-link" href="\(link)">\(HTML.field(p.id, budget: 200))</a></td>\
                <td class="status status-\(status)">\(status)</td>\
                <td class="num">\(p.approvals(for: p.contentSHA256).count)/\(required)</td>\
                <td class="num">\(p.writes)</td><td>\(HTML.field(p.maker, budget: 200))</td>\
                <td>\(Layout.time(p.createdAt))</td><td class="mono">\(HTML.field(p.recipePath, budget: 300))</td>\
                <td>\(HTML.field(p.profile, budget: 200))</td></tr>
                """
        }
        body += """
            <table id="plans-table"><thead><tr><th>Plan</th><th>Status</th><th class="num">Approvals</th>\
            <th class="num">Writes</th><th>Maker</th><th>Made</th><th>Recipe</th><th>Profile</th></tr></thead><tbody>
            \(rows)</tbody></table>
            """
        return body
    }

    /// nil when the journal holds no plan `id`.
    func plan(_ id: String, csrf: String, canAct: Bool, notice: HTML?, writesPage: Int) throws -> HTML? {
        guard let p = try context.journal.plan(id) else { return nil }
        let required = context.requiredApprovals(p)
        let status = p.shownStatus(required: required)
        var body: HTML = "<h1>Plan <span id=\"plan-id\" class=\"mono\">\(HTML.field(p.id))</span></h1>"
        if let notice { body += "<p id=\"plan-notice\" class=\"notice\">\(notice)</p>" }
        body += """
            <dl id="plan-facts" class="facts">\
            <dt>Status</dt><dd id="plan-status" class="status status-\(status)">\(status)</dd>\
            <dt>Approvals</dt><dd id="plan-approvals">\(p.approvals(for: p.contentSHA256).count) of \(required) required</dd>\
            <dt>Maker</dt><dd id="plan-maker">\(HTML.field(p.maker, budget: 200)) \
            <span class="muted">(\(p.makerKind == .hub ? "Hub user" : "operating-system user"))</span></dd>\
            <dt>Recipe</dt><dd class="mono">\(HTML.field(p.recipePath, budget: 500))</dd>\
            <dt>Profile</dt><dd>\(HTML.field(p.profile, budget: 200))</dd>\
            <dt>Needs</dt><dd id="plan-permissions">\(p.permissions.isEmpty ? "no permissions" : p.permissions.joined(separator: ", "))</dd>\
            <dt>File</dt><dd class="mono">\(HTML.field(p.path, budget: 500))</dd>\
            <dt>Content</dt><dd class="mono" id="plan-sha256">sha256 \(p.contentSHA256)</dd>\
            <dt>Made</dt><dd>\(Layout.time(p.createdAt))</dd></dl>
            """
        if p.status == .waiting {
            body += actions(p, csrf: csrf, canAct: canAct)
        }
        body += decisions(p)
        let total = try context.journal.runActivity(id: p.id)?.writeCount ?? 0
        body += RunPage(context: context).writesSection(p.id, total: total, page: writesPage)
        return body
    }

    private func actions(_ p: PlanRecord, csrf: String, canAct: Bool) -> HTML {
        guard context.actions != nil else { return "" }
        guard canAct else {
            return """
                <p id="plan-signin" class="muted">To approve or reject this plan, <a href="/signin">sign in</a> \
                with your Hub account.</p>
                """
        }
        let base = "/plans/\(URLText.component(p.id))"
        return """
            <section id="plan-actions"><form id="approve-form" method="post" action="\(base)/approve" \
            data-confirm="Approve plan \(p.id)?">\(Layout.csrfField(csrf))\
            <input type="hidden" name="sha256" value="\(p.contentSHA256)">\
            <button type="submit" id="approve-button">Approve</button></form>\
            <form id="reject-form" method="post" action="\(base)/reject">\(Layout.csrfField(csrf))\
            <input type="hidden" name="sha256" value="\(p.contentSHA256)">\
            <label>Reason <input type="text" name="reason" id="reject-reason" required maxlength="500"></label>\
            <button type="submit" id="reject-button">Reject</button></form></section>
            """
    }

    private func decisions(_ p: PlanRecord) -> HTML {
        guard !p.decisions.isEmpty else { return "<h2>Decisions</h2><p id=\"decisions-empty\" class=\"muted\">None yet.</p>" }
        let rows = p.decisions.map { d -> HTML in
            let stale = d.contentSHA256 != p.contentSHA256 ? " (other content)" : ""
            return """
                <tr class="decision decision-\(d.kind.rawValue)"><td>\(Layout.time(d.decidedAt))</td><td>\(d.kind.rawValue)\(stale)</td>\
                <td>\(HTML.field(d.person, budget: 200))</td><td>\(HTML.field(d.personName ?? "", budget: 300))</td>\
                <td>\(HTML.field(d.reason ?? "", budget: 1000))</td><td class="num">\(d.exitCode.map(String.init) ?? "")</td></tr>
                """
        }
        return """
            <h2>Decisions</h2><table id="decisions-table"><thead><tr><th>When</th><th>What</th><th>Who</th><th>Email</th>\
            <th>Reason</th><th class="num">Exit</th></tr></thead><tbody>\(rows)</tbody></table>
            """
    }
}
