import Foundation
import HubClient
import ScriptHost

/// Where a profile's credential comes from, as people fix it: never the secret itself.
public enum CredentialOrigin: Sendable, Equatable {
    /// An API key in a vault entry (`api_key_ref`).
    case vaultEntry(String)
    /// An API key in an environment variable (`api_key_env`).
    case environment(String)
    /// An API key written in the configuration file (`api_key`).
    case configFile(String?)
    /// A user's login session (`email = …`), kept by `hubscript login`.
    case session(email: String)
    /// The built-in sandbox's published key.
    case builtinSandbox

    /// The origin of profile `setting`'s credential; `configPath`: the file that defines it.
    public static func of(_ setting: HubConfig.ProfileSetting, configPath: String?) -> CredentialOrigin {
        switch setting {
        case .sandbox: return .builtinSandbox
        case .hub(let profile):
            switch profile.auth {
            case .session(let email): return .session(email: email)
            case .apiKey(.reference(let entry)): return .vaultEntry(entry)
            case .apiKey(.environment(let variable)): return .environment(variable)
            case .apiKey(.literal): return .configFile(configPath)
            }
        }
    }

    /// One phrase for people: `the vault entry hub/prod`, `$HUB_KEY`, ….
    public var phrase: String {
        switch self {
        case .vaultEntry(let entry): "the vault entry \(entry) (api_key_ref)"
        case .environment(let variable): "the environment variable $\(variable) (api_key_env)"
        case .configFile(let path): "the configuration file\(path.map { " \($0)" } ?? "") (api_key, in plain text)"
        case .session(let email): "the login session of \(email) (hubscript login)"
        case .builtinSandbox: "the built-in sandbox's published test key"
        }
    }

    /// A short stable word for `--json`: `vault`, `environment`, `config_file`, `session`, `builtin_sandbox`.
    public var kind: String {
        switch self {
        case .vaultEntry: "vault"
        case .environment: "environment"
        case .configFile: "config_file"
        case .session: "session"
        case .builtinSandbox: "builtin_sandbox"
        }
    }
}

/// A Hub that refused the profile's credential (401) or could not be reached at all
/// (no answer: refused connection, unknown name, a TLS certificate not trusted, a
/// timeout): the profile's problem, not the recipe's. Reported as what it is, naming
/// the profile and what to do, with no recipe traceback; exit code 3 for a credential,
/// 7 for the way to the Hub (`RunExitCode`).
public struct HubReachFailure: Error, Sendable, CustomStringConvertible {
    public enum Kind: String, Sendable, Equatable {
        /// 401: an API key the Hub does not know (never issued, revoked, expired).
        case keyRejected = "api_key_rejected"
        /// 401 or an ended refresh: a login session that is over.
        case sessionEnded = "session_ended"
        /// The Hub's host name does not resolve.
        case nameNotFound = "hub_name_not_found"
        /// Nothing accepts connections at the Hub's address.
        case connectionRefused = "hub_connection_refused"
        /// The Hub's TLS certificate does not verify against the trusted CAs.
        case tlsUntrusted = "hub_tls_untrusted"
        /// The server speaks plain HTTP on an `https://` URL (or TLS on `http://`).
        case wrongProtocol = "hub_wrong_protocol"
        /// No answer within the client's timeouts.
        case timedOut = "hub_timed_out"
        /// Any other failure of the way to the Hub (connection lost, …).
        case unreachable = "hub_unreachable"
    }

    public let kind: Kind
    public let profile: String
    /// The Hub's base URL (no credential ever rides in it).
    public let hubURL: String
    /// What the client saw, in its words (`Could not resolve host: …`).
    public let cause: String
    public let origin: CredentialOrigin?

    /// The stable code of the `--json` error.
    public var code: String { kind.rawValue }

    public var isCredential: Bool { kind == .keyRejected || kind == .sessionEnded }

    /// 3 for a credential the Hub refuses (as a key whose record says it is revoked), 7
    /// for a Hub that could not be reached.
    public var exitCode: Int32 { isCredential ? RunExitCode.capabilityDenied : RunExitCode.hubUnreachable }

    /// `profile 'prod': the API key is unknown or revoked (401 from https://…); make a new key and store it: …`.
    public var description: String { "profile '\(profile)': \(what); \(remedy)" }

    /// The proxy the connection went through (`HTTPS_PROXY`, …), if any.
    public var proxy: String?

    /// The cause on one line: it holds the server's words (a 401's message), which must
    /// not start lines of their own (a forged `done:`) or carry terminal controls.
    var shownCause: String { TerminalText.line(cause) }

    /// The cause, led by the Hub's URL unless it names it already.
    var located: String { cause.contains(hubURL) ? shownCause : "\(hubURL): \(shownCause)" }

    /// What went wrong, with the evidence.
    public var what: String {
        switch kind {
        case .keyRejected:
            return "the API key is unknown, revoked or expired (401 from \(located))"
        case .sessionEnded:
            return "its login session has ended or was never started (\(located))"
        case .nameNotFound:
            return "the Hub's host name does not resolve (\(located))"
        case .connectionRefused:
            return "nothing accepts connections at \(hubURL)\(proxy.map { " or at the proxy \($0)" } ?? "") (\(shownCause))"
        case .tlsUntrusted:
            return "the Hub's TLS certificate is not trusted (\(located))"
        case .wrongProtocol:
            return "the server does not speak the protocol of hub_url (\(located))"
        case .timedOut:
            return "the Hub did not answer in time (\(located))"
        case .unreachable:
            return "the Hub could not be reached (\(located))"
        }
    }

    /// What to do about it.
    public var remedy: String {
        switch kind {
        case .keyRejected:
            switch origin {
            case .vaultEntry(let entry)?:
                return "make a new key and store it: hubscript vault set \(entry)"
            case .environment(let variable)?:
                return "make a new key and put it in $\(variable) (better: hubscript vault set hub/\(profile), then api_key_ref = \"hub/\(profile)\")"
            case .configFile(let path)?:
                return "make a new key and store it: hubscript vault set hub/\(profile), then replace api_key with api_key_ref = \"hub/\(profile)\" in \(path ?? "the configuration")"
            case .builtinSandbox?:
                return "the built-in sandbox's key was revoked in the sandbox; start it afresh: hubscript sandbox reset"
            case .session?, nil:
                return "check the profile's credential"
            }
        case .sessionEnded:
            return "sign in again: hubscript login --profile \(profile)"
        case .nameNotFound:
            return "check hub_url in profile '\(profile)' and this machine's DNS"
        case .connectionRefused:
            if let proxy { return "check that the proxy \(proxy) is running (or set NO_PROXY for this host), then the Hub and the port of hub_url in profile '\(profile)'" }
            return "check that the Hub (or hubscript sandbox serve) is running there, and the port of hub_url in profile '\(profile)'"
        case .tlsUntrusted:
            return "if the Hub uses a private CA, set ca_file = \"/path/to/ca.pem\" in profile '\(profile)' "
                + "(docs/operations.md, \"TLS: private CAs and proxies\")"
        case .wrongProtocol:
            return "fix hub_url in profile '\(profile)'"
        case .timedOut, .unreachable:
            return "check the network (and HTTPS_PROXY), then try again"
        }
    }

    public init(kind: Kind, profile: String, hubURL: String, cause: String, origin: CredentialOrigin?) {
        self.kind = kind
        self.profile = profile
        self.hubURL = hubURL
        self.cause = cause
        self.origin = origin
    }

    /// The reach failure `error` is, for profile `profile` (`hubURL`, credential from
    /// `origin`), or nil when it is any other error (a 403, a 404, a validation error,
    /// a configuration error: those stay as they are).
    public static func classify(_ error: HubError, profile: String, hubURL: String, origin: CredentialOrigin?) -> HubReachFailure? {
        classify(code: error.code, status: error.status, reason: error.details?["reason"]?.stringValue, message: error.message,
                 profile: profile, hubURL: hubURL, origin: origin)
    }

    /// The same from the fields of a Hub error as a recipe sees it (`code`, `status`,
    /// `details.reason`, `message`).
    public static func classify(code: String, status: Int?, reason: String?, message: String,
                                profile: String, hubURL: String, origin: CredentialOrigin?) -> HubReachFailure? {
        // The client's "No response from the Hub: " says what `what` says already.
        let prefix = "No response from the Hub: "
        let cause = message.hasPrefix(prefix) ? String(message.dropFirst(prefix.count)) : message
        func make(_ kind: Kind) -> HubReachFailure {
            HubReachFailure(kind: kind, profile: profile, hubURL: hubURL, cause: cause, origin: origin)
        }
        switch code {
        case HubError.Code.sessionEnded, HubError.Code.sessionRevoked, HubError.Code.refreshTokenReused:
            return make(.sessionEnded)
        case HubError.Code.unauthenticated where status == 401:
            if case .session? = origin { return make(.sessionEnded) }
            return make(.keyRejected)
        // The Hub client's transport errors say why (`details.reason`); Dispatch's do not,
        // and a Dispatch out of reach is not the Hub.
        case HubError.Code.transportError where status == nil && reason != nil:
            switch reason {
            case "untrusted_certificate": return make(.tlsUntrusted)
            case "wrong_protocol": return make(.wrongProtocol)
            case "timed_out": return make(.timedOut)
            case "cannot_connect":
                let lower = message.lowercased()
                if lower.contains("resolve") || lower.contains("name or service not known") || lower.contains("no address") {
                    return make(.nameNotFound)
                }
                if lower.contains("refused") || lower.contains("couldn't connect") || lower.contains("could not connect") {
                    return make(.connectionRefused)
                }
                return make(.unreachable)
            default:
                return make(.unreachable)
            }
        default:
            return nil
        }
    }
}
