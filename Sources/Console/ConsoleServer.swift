import Foundation
import HTTPKit
import HubClient

/// The operator console: answers every request of an `HTTPServer` (`handle`).
///
/// Routes (GET unless said): `/` and `/runs` (runs), `/runs/ID` (a run),
/// `/runs/ID/events` (its live view), `/plans`, `/plans/ID`, `/jobs`, `/jobs/NAME`,
/// `/triggers`, `/signin`; POST `/signin`, `/signout`, `/jobs/NAME/fire`,
/// `/plans/ID/approve`, `/plans/ID/reject`;
/// `/static/console.css` and `/static/console.js`; `/healthz` (the only one answered
/// without access: `ok`). Access: ``ConsoleAccess``. Every response carries
/// ``ConsoleResponse``'s header fields; an unexpected failure is a 500 page that says
/// what went wrong, never a crash.
public final class ConsoleServer: Sendable {
    public let context: ConsoleContext
    public let access: ConsoleAccess

    /// The limits the console serves with: small forms, the usual deadlines.
    public static let limits: HTTPServerLimits = {
        var limits = HTTPServerLimits()
        limits.maxBodyBytes = 64 * 1024
        limits.maxHeaderBytes = 32 * 1024
        return limits
    }()

    /// Set by `beginStopping`: live views answer at once instead of waiting for a change.
    private let stopping = StopFlag()

    public init(context: ConsoleContext, access: ConsoleAccess) {
        self.context = context
        self.access = access
    }

    /// Call before stopping the server: a live view waiting for a change answers now,
    /// so the server's shutdown does not wait for it.
    public func beginStopping() { stopping.set() }

    public func handle(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
        let segments = request.pathSegments
        let method = request.method == "HEAD" ? "GET" : request.method
        if segments == ["healthz"], method == "GET" { return ConsoleResponse.text(200, "ok\n") }
        guard method == "GET" || method == "POST" else {
            var response = ConsoleResponse.text(405, "the console answers GET and POST only\n")
            response.headers.add("Allow", "GET, HEAD, POST")
            return response
        }
        let session: ConsoleSession
        switch access.admit(request, layout: Layout()) {
        case .answer(let response): return response
        case .admitted(let admitted): session = admitted
        }
        let layout = Layout(csrf: session.csrf, person: session.person?.email)
        do {
            if method == "POST" { return try post(request, segments, session: session, layout: layout) }
            return try get(request, segments, session: session, layout: layout)
        } catch {
            return ConsoleResponse.problem(500, title: "The console could not answer",
                                           "\(String(describing: error))", layout: layout)
        }
    }

    // MARK: - Reading

    private func get(_ request: HTTPRequestMessage, _ segments: [String], session: ConsoleSession,
                     layout: Layout) throws -> HTTPResponseMessage {
        var layout = layout
        let items = request.queryItems
        let route = Route(segments)
        switch route {
        case .runs:
            layout.section = "runs"
            switch try RunsPage(context: context).render(items, path: "/runs", plans: false) {
            case .success(let (title, body)): return ConsoleResponse.html(200, layout.page(title: title, body: body))
            case .failure(let problem): return answer(problem, layout)
            }
        case .plans:
            layout.section = "plans"
            return ConsoleResponse.html(200, layout.page(title: "Plans", body: try PlansPage(context: context).list()))
        case .plan(let id):
            layout.section = "plans"
            let value = { (key: String) in items.first { $0.name == key }?.value }
            let notice: HTML? = value("approved") != nil ? "Your approval is recorded."
                : value("rejected") != nil ? "Your rejection is recorded: this plan will not be applied." : nil
            let page = Int(value("wpage") ?? "") ?? 1
            guard let body = try PlansPage(context: context).plan(id, csrf: session.csrf, canAct: session.person != nil,
                                                                  notice: notice, writesPage: page) else {
                return answer(.notFound("the journal holds no plan \(id) (the plans page lists them)"), layout)
            }
            return ConsoleResponse.html(200, layout.page(title: "Plan " + id, body: body))
        case .run(let id):
            layout.section = "runs"
            let page = Int(items.first { $0.name == "wpage" }?.value ?? "") ?? 1
            guard let (title, body) = try RunPage(context: context).render(id: id, writesPage: page) else {
                return answer(.notFound("the journal holds no run \(id)"), layout)
            }
            return ConsoleResponse.html(200, layout.page(title: title, body: body))
        case .runEvents(let id):
            let page = Int(items.first { $0.name == "wpage" }?.value ?? "") ?? 1
            let live = LiveRunEvents(context: context, page: RunPage(context: context), stopping: stopping)
            guard let response = try live.respond(id: id, lastEventID: request.headers["Last-Event-ID"], writesPage: page) else {
                return ConsoleResponse.text(404, "the journal holds no run \(id)\n")
            }
            return response
        case .jobs:
            layout.section = "jobs"
            return ConsoleResponse.html(200, layout.page(title: "Jobs", body: try JobsPage(context: context).list()))
        case .job(let name):
            layout.section = "jobs"
            let value = { (key: String) in items.first { $0.name == key }?.value }
            var notice: HTML?
            if let fired = value("fired") {
                notice = "Fired: <a id=\"fired-run\" href=\"/runs/\(URLText.component(fired))\">\(HTML.field(fired))</a> runs now."
            } else if let skipped = value("skipped") {
                notice = "Not fired: \(HTML.field(skipped)) was skipped (see its reason in the history)."
            }
            guard let result = try JobsPage(context: context).job(name, items: items, csrf: session.csrf, notice: notice) else {
                return answer(.notFound("the configuration has no job \(name) (the jobs page lists them)"), layout)
            }
            switch result {
            case .failure(let problem): return answer(problem, layout)
            case .success(let body): return ConsoleResponse.html(200, layout.page(title: "Job " + name, body: body))
            }
        case .triggers:
            layout.section = "triggers"
            return ConsoleResponse.html(200, layout.page(title: "Triggers", body: try TriggersPage(context: context).render(items)))
        case .signIn:
            guard context.actions != nil else { return answer(.notFound("this console is read-only: it has no sign-in"), layout) }
            return ConsoleResponse.html(200, layout.page(title: "Sign in", body: SignInPage.form(csrf: session.csrf)))
        case .style:
            return ConsoleResponse.text(200, ConsoleStyle.css, contentType: "text/css; charset=utf-8")
        case .script:
            return ConsoleResponse.text(200, ConsoleScript.js, contentType: "text/javascript; charset=utf-8")
        case .signOut, .fire, .approve, .reject, .unknown:
            return answer(.notFound("no page \(request.path) (start from the runs page)"), layout)
        }
    }

    func answer(_ problem: ConsoleProblem, _ layout: Layout) -> HTTPResponseMessage {
        ConsoleResponse.problem(problem.status, title: problem.title, "\(problem.message)", layout: layout)
    }

    // MARK: - Changing

    private func post(_ request: HTTPRequestMessage, _ segments: [String], session: ConsoleSession,
                      layout: Layout) throws -> HTTPResponseMessage {
        let type = request.headers["Content-Type"] ?? ""
        guard type.lowercased().hasPrefix("application/x-www-form-urlencoded") else {
            return ConsoleResponse.problem(415, title: "Not a form", "the console takes forms (application/x-www-form-urlencoded) only",
                                           layout: layout)
        }
        let form = Self.form(request.body)
        if let refusal = access.refusal(of: request, form: form, session: session) {
            return ConsoleResponse.problem(403, title: "Refused", "\(refusal)", layout: layout)
        }
        guard let actions = context.actions else {
            return answer(.notFound("this console is read-only: it takes no actions"), layout)
        }
        switch Route(segments) {
        case .signIn: return signIn(form, session: session, actions: actions, layout: layout)
        case .signOut: return signOut(session)
        case .fire(let name): return try fire(name, session: session, actions: actions, layout: layout)
        case .approve(let id): return decide(.approve, plan: id, form: form, session: session, layout: layout)
        case .reject(let id): return decide(.reject, plan: id, form: form, session: session, layout: layout)
        default: return answer(.notFound("no action \(request.path)"), layout)
        }
    }

    /// The fields of a form body (the last value of a repeated name wins).
    static func form(_ body: Data) -> [String: String] {
        let text = String(decoding: body, as: UTF8.self)
        var fields: [String: String] = [:]
        for item in HTTPRequestMessage(method: "POST", target: "/?" + text).queryItems { fields[item.name] = item.value }
        return fields
    }
}
