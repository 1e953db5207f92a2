import Foundation
import SystemText

/// The frame of every page: head (the console's own CSS and JS, nothing inline),
/// navigation, who is signed in, and the page's body.
struct Layout {
    /// The session's CSRF token, for the forms the frame holds (nil: no session yet).
    var csrf: String?
    /// The signed-in Hub user's email, if any.
    var person: String?
    /// Which navigation entry is current (`runs`, `jobs`, `triggers`, `plans`).
    var section = ""

    func page(title: String, body: HTML) -> HTML {
        let nav: [(String, String, String)] = [("runs", "/runs", "Runs"), ("jobs", "/jobs", "Jobs"),
                                                ("triggers", "/triggers", "Triggers"), ("plans", "/plans", "Plans")]
        let links = nav.map { id, path, label -> HTML in
            id == section ? "<a id=\"nav-\(id)\" href=\"\(path)\" aria-current=\"page\">\(label)</a>"
                : "<a id=\"nav-\(id)\" href=\"\(path)\">\(label)</a>"
        }
        return """
            <!DOCTYPE html>
            <html lang="en"><head><meta charset="utf-8"><meta name="viewport" content="width=device-width, initial-scale=1">
            <meta name="referrer" content="no-referrer">
            <title>\(title) · hubscript console</title>
            <link rel="stylesheet" href="/static/console.css"><script src="/static/console.js" defer></script></head>
            <body><header id="top"><span class="brand">hubscript console</span><nav id="nav">\(links)</nav>\(who)</header>
            <main id="main">
            \(body)
            </main></body></html>

            """
    }

    /// Who is signed in, with the sign-out button; or the sign-in link.
    private var who: HTML {
        guard let csrf else { return "" }
        guard let person else { return "<span id=\"who\"><a id=\"signin-link\" href=\"/signin\">Sign in to act</a></span>" }
        return """
            <span id="who">Signed in as <span id="who-email">\(HTML.field(person))</span> \
            <form id="signout-form" class="inline" method="post" action="/signout">\(Layout.csrfField(csrf))\
            <button type="submit" id="signout">Sign out</button></form></span>
            """
    }

    static func csrfField(_ csrf: String) -> HTML { "<input type=\"hidden\" name=\"csrf\" value=\"\(csrf)\">" }

    /// `date` as RFC 3339 UTC with `<time>`, or `—`.
    static func time(_ date: Date?) -> HTML {
        guard let date else { return "—" }
        let text = utc(date)
        return "<time datetime=\"\(text)\">\(text)</time>"
    }

    /// `2026-11-30T14:22:33Z` (whole seconds). By arithmetic: a formatter made per
    /// cell was most of a page's time.
    static func utc(_ date: Date) -> String {
        UTCFields(secondsSince1970: Int64(date.timeIntervalSince1970.rounded(.down))).description
    }

    /// `date` on `zone`'s clock, RFC 3339 with its offset (`2026-12-01T03:00:00+01:00`;
    /// `Z` when the offset is 0).
    static func local(_ date: Date, _ zone: TimeZone) -> String {
        let offset = zone.secondsFromGMT(for: date)
        guard offset != 0 else { return utc(date) }
        let fields = UTCFields(secondsSince1970: Int64(date.timeIntervalSince1970.rounded(.down)) + Int64(offset))
        let minutes = abs(offset) / 60
        func two(_ n: Int) -> String { n < 10 ? "0\(n)" : String(n) }
        return String(fields.description.dropLast()) + (offset < 0 ? "-" : "+") + two(minutes / 60) + ":" + two(minutes % 60)
    }

    /// `0.42 s`, or `—`.
    static func duration(_ ms: Int?) -> String {
        guard let ms else { return "—" }
        return String(format: "%.2f s", Double(ms) / 1000)
    }
}
