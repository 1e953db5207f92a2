import Foundation
import HTTPKit
import HubClient
import RunJournal

/// The console's Approve and Reject of a saved plan (reached only through
/// `ConsoleServer.post`, after the CSRF and origin checks). The person is the signed-in
/// Hub user, asked again now (`GET /users/me` with their session); the decision is bound
/// to the plan content the page showed (its `sha256` field) and checked by the journal
/// (`Journal.approvePlan`: not the maker, every permission the plan needs).
extension ConsoleServer {
    enum PlanDecisionKind { case approve, reject }

    func decide(_ kind: PlanDecisionKind, plan id: String, form: [String: String], session: ConsoleSession,
                layout: Layout) -> HTTPResponseMessage {
        let verb = kind == .approve ? "Approving" : "Rejecting"
        guard let person = session.person else {
            return ConsoleResponse.problem(403, title: "Sign in first", """
                \(verb) a plan needs a signed-in Hub user: <a id="signin-link-problem" href="/signin">sign in</a>, then try again.
                """, layout: layout)
        }
        let me: HubJSON
        let permissions: Set<String>
        do {
            me = try person.client.get("/users/me").json
            permissions = try person.client.capabilities(refresh: true).permissions
        } catch {
            let renewed = access.sessions.renew(session, person: nil)
            let body: HTML = """
                <section id="problem" class="problem" data-status="403"><h1>Sign in again</h1><p>Your Hub session could not \
                be checked (\(String(describing: error))): <a href="/signin">sign in again</a>.</p></section>
                """
            return ConsoleResponse.html(403, Layout(csrf: renewed.csrf).page(title: "Sign in again", body: body),
                                        cookie: access.setCookie(renewed.id))
        }
        guard let userID = me["id"]?.stringValue, !userID.isEmpty else {
            return ConsoleResponse.problem(403, title: "Not permitted", "the Hub did not say who you are (GET /users/me has no id)",
                                           layout: layout)
        }
        let email = me["email"]?.stringValue ?? person.email
        let sha = form["sha256"] ?? ""
        do {
            switch kind {
            case .approve:
                try context.journal.approvePlan(id, contentSHA256: sha, person: userID, personName: email, permissions: permissions)
            case .reject:
                let reason = (form["reason"] ?? "").trimmingCharacters(in: .whitespacesAndNewlines)
                guard !reason.isEmpty else {
                    return ConsoleResponse.problem(400, title: "Say why", "A rejection needs a reason.", layout: layout)
                }
                if let record = try context.journal.plan(id), !(record.makerKind == .hub && record.maker == userID) {
                    let lacking = record.permissions.filter { !permissions.contains($0) }
                    guard lacking.isEmpty else {
                        return ConsoleResponse.problem(403, title: "Not permitted", """
                            \(email) lacks what plan \(id)'s writes need: \(lacking.joined(separator: ", ")); only its maker or a \
                            person holding \(record.permissions.joined(separator: ", ")) can reject it
                            """, layout: layout)
                    }
                }
                try context.journal.rejectPlan(id, contentSHA256: sha, person: userID, personName: email, reason: String(reason.prefix(500)))
            }
        } catch let refusal as PlanApprovalError {
            let status = [PlanApprovalError.Code.maker, .lacksPermissions, .alreadyApproved].contains(refusal.code) ? 403 : 409
            return ConsoleResponse.problem(status, title: status == 403 ? "Not permitted" : "Not recorded", "\(refusal.message)",
                                           layout: layout)
        } catch {
            return ConsoleResponse.problem(500, title: "Not recorded", "\(String(describing: error))", layout: layout)
        }
        let done = kind == .approve ? "approved" : "rejected"
        return ConsoleResponse.redirect(URLText.link("/plans/" + URLText.component(id), [(done, "1")]))
    }
}
