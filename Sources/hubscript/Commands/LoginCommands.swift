import Foundation
import HubClient

/// `hubscript login --profile P`: signs in to a session profile and stores its
/// rotating refresh token in the vault (`sessions/P`) when one exists, else in the
/// state directory (0600).
struct LoginCommand: Command {
    static let configuration = CommandConfiguration(
        name: "login",
        abstract: "Sign in to a profile that uses a user session.",
        usage: "--profile P [--email E] [--password-stdin] [--mfa-code C]",
        options: [
            OptionSpec(name: "email", valueName: "email", help: "The account (default: the profile's email)."),
            OptionSpec(name: "password-stdin", valueName: nil, help: "Read the password from the first line of stdin."),
            OptionSpec(name: "mfa-code", valueName: "code", help: "The current MFA code, if the account uses MFA."),
        ] + CommonOptions.specs,
        discussion: "On a terminal, missing values are prompted for (the password without echo).")

    let common: CommonOptions.Values
    let email: String?
    let passwordFromStdin: Bool
    let mfaCode: String?

    init(_ arguments: ParsedArguments) throws {
        common = try CommonOptions.Values(arguments)
        email = arguments.value("email")
        passwordFromStdin = arguments.flag("password-stdin")
        mfaCode = arguments.value("mfa-code")
    }

    func run() throws -> Int32 {
        let config = common.hub
        let (name, setting) = try config.profile(named: common.profile)
        guard case .hub(let profile) = setting, case .session(let profileEmail) = profile.auth else {
            Console.err("hubscript login: profile '\(name)' does not use a user session (set email = \"…\" in its config to use login)\n")
            return ExitCode.usage
        }
        var fileHint: String?
        let connection = try VaultAccess.connect(config: config, profile: name, state: common.state, quiet: false,
                                                 fileHint: { fileHint = $0 })
        let account = email ?? profileEmail
        guard let password = passwordFromStdin ? readLine(strippingNewline: true) : Prompt.secret("Password for \(account): ") else {
            Console.err("hubscript login: no password (pass --password-stdin, or run on a terminal)\n")
            return ExitCode.usage
        }
        let auth = HubAuth(client: connection.client)
        do {
            try auth.login(email: account, password: password, mfaCode: mfaCode)
        } catch let error as HubError where error.code == HubError.Code.mfaRequired {
            guard let code = Prompt.line("MFA code: ") else {
                Console.err("hubscript login: \(account) uses MFA; pass --mfa-code\n")
                return ExitCode.usage
            }
            try auth.login(email: account, password: password, mfaCode: code)
        }
        Console.out("Signed in to '\(name)' as \(account).\n")
        if let fileHint { Console.err(fileHint + "\n") }
        return ExitCode.success
    }
}

/// `hubscript logout --profile P`: ends the session on the Hub and forgets it here.
struct LogoutCommand: Command {
    static let configuration = CommandConfiguration(
        name: "logout",
        abstract: "Sign out of a session profile and delete its stored credentials.",
        usage: "--profile P [--all-sessions]",
        options: [OptionSpec(name: "all-sessions", valueName: nil, help: "End every session of the account, not only this one.")]
            + CommonOptions.specs)

    let common: CommonOptions.Values
    let allSessions: Bool

    init(_ arguments: ParsedArguments) throws {
        common = try CommonOptions.Values(arguments)
        allSessions = arguments.flag("all-sessions")
    }

    func run() throws -> Int32 {
        let connection = try common.connect()
        let result = try HubAuth(client: connection.client).logout(allSessions: allSessions)
        if result.serverConfirmed {
            Console.out("Signed out of '\(connection.profileName)'.\n")
        } else {
            Console.out("Forgot the session of '\(connection.profileName)' here; the Hub did not confirm the sign-out (\(result.serverError?.code ?? "unreachable")).\n")
        }
        return ExitCode.success
    }
}

/// Terminal prompts; nil when stdin is not a terminal.
enum Prompt {
    static func line(_ text: String) -> String? {
        guard isatty(0) != 0 else { return nil }
        Console.err(text)
        return readLine(strippingNewline: true)
    }

    /// Reads a line with echo off.
    static func secret(_ text: String) -> String? {
        guard isatty(0) != 0 else { return nil }
        Console.err(text)
        var old = termios()
        tcgetattr(0, &old)
        var silent = old
        silent.c_lflag &= ~tcflag_t(ECHO)
        tcsetattr(0, TCSANOW, &silent)
        defer {
            tcsetattr(0, TCSANOW, &old)
            Console.err("\n")
        }
        return readLine(strippingNewline: true)
    }
}
