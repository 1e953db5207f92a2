/// `/signin`: the Hub's own sign-in (email, password, and the MFA code when the account
/// uses it), for actions. The password goes to the Hub and is never kept.
enum SignInPage {
    static func form(csrf: String, email: String = "", message: HTML? = nil, askCode: Bool = false) -> HTML {
        var body: HTML = "<h1>Sign in</h1>"
        if let message { body += "<p id=\"signin-message\" class=\"notice\">\(message)</p>" }
        body += """
            <p>Reading needs only the console's link. Actions (fire now) need your Hub account, \
            and the permissions each action needs.</p>
            <form id="signin-form" method="post" action="/signin">\(Layout.csrfField(csrf))
            <p><label>Email<br><input type="email" name="email" id="signin-email" value="\(email)" required autocomplete="username"></label></p>
            <p><label>Password<br><input type="password" name="password" id="signin-password" required autocomplete="current-password"></label></p>
            <p><label>MFA code\(askCode ? " (this account uses MFA)" : " (if your account uses MFA)")<br>\
            <input type="text" name="mfa_code" id="signin-mfa" inputmode="numeric" autocomplete="one-time-code"></label></p>
            <p><button type="submit" id="signin-submit">Sign in</button></p></form>
            """
        return body
    }
}
