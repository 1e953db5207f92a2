import Foundation
import HTTPKit
import HubClient

/// What the console changes: signing in and out with the Hub's own login, and firing a
/// job (each reached only through `ConsoleServer.post`, after the CSRF and origin checks).
extension ConsoleServer {
    func signIn(_ form: [String: String], session: ConsoleSession, actions: any ConsoleActions,
                        layout: Layout) -> HTTPResponseMessage {
        let email = form["email"] ?? ""
        let password = form["password"] ?? ""
        let code = (form["mfa_code"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !email.isEmpty, !password.isEmpty else {
            return ConsoleResponse.html(400, layout.page(title: "Sign in", body: SignInPage.form(
                csrf: session.csrf, email: email, message: "Enter your email and password.")))
        }
        do {
            let client = try actions.signInClient()
            try HubAuth(client: client).login(email: email, password: password, mfaCode: code.isEmpty ? nil : code)
            let capabilities = try client.capabilities()
            let person = SignedInPerson(email: email, userID: capabilities.userID, client: client)
            let renewed = access.sessions.renew(session, person: person)
            return ConsoleResponse.redirect("/jobs", cookie: access.setCookie(renewed.id))
        } catch let error as HubError where error.code == HubError.Code.mfaRequired {
            return ConsoleResponse.html(401, layout.page(title: "Sign in", body: SignInPage.form(
                csrf: session.csrf, email: email, message: "This account uses MFA: enter your password and the current code.",
                askCode: true)))
        } catch {
            let message = (error as? HubError)?.message ?? String(describing: error)
            return ConsoleResponse.html(401, layout.page(title: "Sign in", body: SignInPage.form(
                csrf: session.csrf, email: email, message: "The Hub refused the sign-in: \(message)")))
        }
    }

    func signOut(_ session: ConsoleSession) -> HTTPResponseMessage {
        if let person = session.person { _ = try? HubAuth(client: person.client).logout() }
        let renewed = access.sessions.renew(session, person: nil)
        return ConsoleResponse.redirect("/", cookie: access.setCookie(renewed.id))
    }

    func fire(_ name: String, session: ConsoleSession, actions: any ConsoleActions,
                      layout: Layout) throws -> HTTPResponseMessage {
        guard context.jobs.jobs.contains(where: { $0.name == name }) else {
            return answer(.notFound("the configuration has no job \(name) (the jobs page lists them)"), layout)
        }
        guard let person = session.person else {
            return ConsoleResponse.problem(403, title: "Sign in first",
                                           "Firing a job needs a signed-in Hub user: <a id=\"signin-link-problem\" href=\"/signin\">sign in</a>, then fire it again.",
                                           layout: layout)
        }
        let needs = try actions.permissionsToFire(job: name)
        let capabilities: Capabilities
        do { capabilities = try person.client.capabilities(refresh: true) } catch {
            // The Hub no longer honours the session: forget it here too.
            let renewed = access.sessions.renew(session, person: nil)
            let body: HTML = """
                <section id="problem" class="problem" data-status="403"><h1>Sign in again</h1><p>Your Hub session could not \
                be checked (\(String(describing: error))): <a href="/signin">sign in again</a>.</p></section>
                """
            return ConsoleResponse.html(403, Layout(csrf: renewed.csrf).page(title: "Sign in again", body: body),
                                        cookie: access.setCookie(renewed.id))
        }
        let missing = capabilities.missing(needs)
        guard missing.isEmpty else {
            return ConsoleResponse.problem(403, title: "Not permitted", """
                Firing \(name) needs \(needs.joined(separator: ", ")); \(person.email) lacks \(missing.joined(separator: ", ")). \
                Ask an admin for a role that grants them, or let someone who holds them fire it.
                """, layout: layout)
        }
        switch try actions.fireNow(job: name, by: person.email) {
        case .started(let runID):
            return ConsoleResponse.redirect(URLText.link("/jobs/" + URLText.component(name), [("fired", runID)]))
        case .skipped(let runID, _):
            return ConsoleResponse.redirect(URLText.link("/jobs/" + URLText.component(name), [("skipped", runID)]))
        }
    }
}
