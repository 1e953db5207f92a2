import Foundation
import HTTPKit

/// The responses the console sends, each with the same protective header fields.
enum ConsoleResponse {
    /// No script, style, image or connection but the console's own; no frame, no
    /// `<base>`, forms only to the console: escaped text that slipped through still
    /// could not load or run anything.
    static let contentSecurityPolicy = "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self'; "
        + "connect-src 'self'; form-action 'self'; frame-ancestors 'none'; base-uri 'none'"

    /// The header fields every response carries.
    static func headers(contentType: String) -> HTTPHeaders {
        HTTPHeaders([
            ("Content-Type", contentType),
            ("Content-Security-Policy", contentSecurityPolicy),
            ("X-Content-Type-Options", "nosniff"),
            ("Referrer-Policy", "no-referrer"),
            ("Cache-Control", "no-store"),
            ("X-Frame-Options", "DENY"),
            ("Cross-Origin-Opener-Policy", "same-origin"),
            ("Cross-Origin-Resource-Policy", "same-origin"),
        ])
    }

    static func html(_ status: Int, _ body: HTML, cookie: String? = nil) -> HTTPResponseMessage {
        var headers = headers(contentType: "text/html; charset=utf-8")
        if let cookie { headers.add("Set-Cookie", cookie) }
        return HTTPResponseMessage(status: status, headers: headers, body: Data(body.markup.utf8))
    }

    static func text(_ status: Int, _ body: String, contentType: String = "text/plain; charset=utf-8") -> HTTPResponseMessage {
        HTTPResponseMessage(status: status, headers: headers(contentType: contentType), body: Data(body.utf8))
    }

    /// 303 to `location` (a path on the console).
    static func redirect(_ location: String, cookie: String? = nil) -> HTTPResponseMessage {
        var headers = headers(contentType: "text/plain; charset=utf-8")
        headers.add("Location", location)
        if let cookie { headers.add("Set-Cookie", cookie) }
        return HTTPResponseMessage(status: 303, headers: headers, body: Data("see \(location)\n".utf8))
    }

    /// A page that says what went wrong and what to do, in the console's layout.
    static func problem(_ status: Int, title: String, _ message: HTML, layout: Layout) -> HTTPResponseMessage {
        html(status, layout.page(title: title, body: """
            <section id="problem" class="problem" data-status="\(status)"><h1>\(title)</h1><p>\(message)</p></section>
            """))
    }
}
