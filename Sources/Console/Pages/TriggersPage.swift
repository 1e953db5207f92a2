import Foundation
import Configuration
import RunJournal

/// `/triggers`: the configuration's triggers and the events they received, newest
/// first (`?trigger=`, `?offset=`): each event once however often it was delivered
/// (the duplicates counted), with its run and how it ended.
struct TriggersPage {
    let context: ConsoleContext

    static let eventsPerPage = 50

    func render(_ items: [(name: String, value: String)]) throws -> HTML {
        let value = { (key: String) in items.first { $0.name == key }?.value ?? "" }
        let trigger = value("trigger").isEmpty ? nil : value("trigger")
        let offset = max(0, Int(value("offset")) ?? 0)
        var body: HTML = "<h1>Triggers</h1>"
        let configured = context.triggers.triggers.map { t -> HTML in
            """
            <tr class="trigger" data-trigger="\(t.name)"><td><a href="\(URLText.link("/triggers", [("trigger", t.name)]))">\(HTML.field(t.name))</a></td>\
            <td class="mono">\(HTML.field(t.on.joined(separator: ", ")))</td><td class="mono">\(HTML.field(t.library?.description ?? t.recipe.path))</td>\
            <td>\(HTML.field(t.profile ?? "the default"))</td></tr>
            """
        }
        body += configured.isEmpty ? "<p id=\"triggers-empty\" class=\"muted\">The configuration defines no triggers.</p>" : """
            <table id="triggers-table"><thead><tr><th>Trigger</th><th>Events</th><th>Recipe</th><th>Profile</th></tr></thead><tbody>
            \(configured)</tbody></table>
            """
        let events = try context.journal.triggerEventsPage(trigger: trigger, offset: offset, limit: Self.eventsPerPage + 1)
        body += "<h2>Events received\(trigger.map { " by " + $0 } ?? "")</h2>" as HTML
        if events.isEmpty {
            body += "<p id=\"events-empty\" class=\"muted\">No events received.</p>"
        } else {
            let rows = events.prefix(Self.eventsPerPage).map { e -> HTML in
                let outcome = e.status == .running && !context.locks.isHeld(e.runID) ? "interrupted" : e.status.rawValue
                return """
                    <tr class="event" data-event-id="\(e.eventID)"><td>\(Layout.time(e.receivedAt))</td>\
                    <td class="mono">\(HTML.field(e.eventID, budget: 160))</td><td class="mono">\(HTML.field(e.eventType, budget: 120))</td>\
                    <td>\(HTML.field(e.trigger, budget: 120))</td><td class="num">\(e.deliveries)</td>\
                    <td class="num">\(e.deliveries - 1)</td>\
                    <td class="mono"><a class="run-link" href="/runs/\(URLText.component(e.runID))">\(HTML.field(e.runID, budget: 200))</a></td>\
                    <td class="status status-\(outcome)">\(outcome)</td></tr>
                    """
            }
            body += """
                <table id="events-table"><thead><tr><th>Received</th><th>Event</th><th>Type</th><th>Trigger</th>\
                <th class="num">Deliveries</th><th class="num">Duplicates</th><th>Run</th><th>Outcome</th></tr></thead><tbody>
                \(Array(rows))</tbody></table>
                """
        }
        var pager: HTML = ""
        if offset > 0 {
            pager += "<a id=\"events-newer\" href=\"\(URLText.link("/triggers", [("trigger", trigger ?? ""), ("offset", String(max(0, offset - Self.eventsPerPage)))]))\">Newer</a>"
        }
        if events.count > Self.eventsPerPage {
            pager += "<a id=\"events-older\" href=\"\(URLText.link("/triggers", [("trigger", trigger ?? ""), ("offset", String(offset + Self.eventsPerPage))]))\">Older</a>"
        }
        body += "<div class=\"pager\">\(pager)</div>"
        return body
    }
}
