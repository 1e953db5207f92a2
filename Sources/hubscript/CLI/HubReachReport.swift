import Foundation
import Synchronization
import HubClient
import ScriptHost
import Runs
import RunJournal
import SystemText

/// What the Hub client of one command saw that marks a credential or a network
/// failure: a `401` answer, an attempt that failed in transport. A recipe's error is
/// read as a `HubReachFailure` only when the client saw one of these, so a recipe that
/// raises `{ code = "transport_error" }` itself is still reported as the recipe's error.
final class HubReachWitness: Sendable {
    private let seen = Mutex<(unauthorized: Bool, transport: Bool)>((false, false))

    /// Notes `event`; chain it before the command's own observer.
    func note(_ event: HubClientEvent) {
        switch event {
        case .answered(_, _, let status, _) where status == 401: seen.withLock { $0.unauthorized = true }
        case .transportFailed: seen.withLock { $0.transport = true }
        default: break
        }
    }

    /// An observer that notes each event, then hands it to `then`.
    func observer(then: (@Sendable (HubClientEvent) -> Void)?) -> @Sendable (HubClientEvent) -> Void {
        { [self] event in
            note(event)
            then?(event)
        }
    }

    /// Whether the client saw what a failure of `kind` needs. A login session that
    /// ended may have ended before anything was sent (none stored), so for a session
    /// profile `session_ended` needs no 401.
    func saw(_ kind: HubReachFailure.Kind, sessionProfile: Bool) -> Bool {
        let s = seen.withLock { $0 }
        switch kind {
        case .sessionEnded where sessionProfile: return true
        case .keyRejected, .sessionEnded: return s.unauthorized
        default: return s.transport
        }
    }
}

/// Reading a command's failures as credential or network failures of its profile.
struct HubReachContext {
    let profile: String
    let hubURL: String
    let origin: CredentialOrigin?
    let witness: HubReachWitness
    /// ` --config …` and ` --state-dir …` for the resume command (`CommonOptions.Values.repeatedOptions`).
    let repeatedOptions: String

    init(common: CommonOptions.Values, profile: String, witness: HubReachWitness) {
        self.profile = profile
        repeatedOptions = common.repeatedOptions
        let setting = try? common.hub.profile(named: profile).setting
        switch setting {
        case .hub(let p)?: hubURL = p.hubURL.absoluteString
        default: hubURL = "the built-in sandbox"
        }
        origin = setting.map { CredentialOrigin.of($0, configPath: common.hub.source?.path) }
        self.witness = witness
    }

    var isSession: Bool {
        if case .session? = origin { return true }
        return false
    }

    /// The reach failure a Hub error thrown by the command is, if the client saw it.
    func failure(for error: HubError) -> HubReachFailure? {
        guard var reach = HubReachFailure.classify(error, profile: profile, hubURL: hubURL, origin: origin),
              witness.saw(reach.kind, sessionProfile: isSession) else { return nil }
        reach.proxy = proxy
        return reach
    }

    /// The proxy a connection to the Hub goes through, as libcurl picks it (the
    /// variables it reads; `NO_PROXY` is not weighed: the message says "or"), with its
    /// user and password hidden (`http://***@proxy:3128`): the message is shown and
    /// journalled.
    var proxy: String? { proxyVariable.map(URLUserInfo.hidden) }

    private var proxyVariable: String? {
        guard hubURL.hasPrefix("http") else { return nil }
        let names = hubURL.hasPrefix("https:") ? ["https_proxy", "HTTPS_PROXY", "all_proxy", "ALL_PROXY"]
            : ["http_proxy", "all_proxy", "ALL_PROXY"]
        for name in names { if let value = ProcessEnvironment.value(name), !value.isEmpty { return value } }
        return nil
    }

    /// The reach failure a recipe's uncaught Hub error is (its structured table), if the
    /// client saw it.
    func failure(for failure: ScriptFailure) -> HubReachFailure? {
        guard failure.kind == .runtime, let structured = failure.structured, case .string(let code) = structured["code"] else {
            return nil
        }
        let status = structured["status"].intValue.map(Int.init)
        let reason = structured["details"]["reason"].stringValue
        let message = structured["message"].stringValue ?? code
        guard var reach = HubReachFailure.classify(code: code, status: status, reason: reason, message: message,
                                                   profile: profile, hubURL: hubURL, origin: origin),
              witness.saw(reach.kind, sessionProfile: isSession) else { return nil }
        reach.proxy = proxy
        return reach
    }

    /// A recipe's uncaught failure that is a credential or network failure, as people
    /// and the journal get it: no traceback, the profile named, what to do, exit code 3
    /// or 7; a run (not a plan) that wrote says how to resume it. nil for any other failure.
    func reread(_ failure: ScriptFailure, runID: String, counts: RunCounts, mode: HubRunRequest.Mode) -> (failure: ScriptFailure, exitCode: Int32)? {
        guard let reach = self.failure(for: failure) else { return nil }
        var message = reach.description
        if case .plan = mode {} else if counts.writes > 0 {
            message += "\nThe writes made before it are journalled and will not be repeated; once fixed, finish the run with: "
                + "hubscript runs resume " + ShellWord.quoted(runID) + repeatedOptions
        }
        return (Self.scriptFailure(reach, message: message), reach.exitCode)
    }

    /// The failure people and `--json` see: kind `host`, `error.code` the reach code.
    static func scriptFailure(_ reach: HubReachFailure, message: String? = nil) -> ScriptFailure {
        ScriptFailure(kind: .host, message: message ?? reach.description, structured: structured(reach))
    }

    static func structured(_ reach: HubReachFailure) -> ScriptValue {
        var fields: [String: ScriptValue] = [
            "code": .string(reach.code), "profile": .string(reach.profile), "hub_url": .string(reach.hubURL),
            "cause": .string(reach.cause), "remedy": .string(reach.remedy),
        ]
        if let origin = reach.origin { fields["credential"] = .string(origin.kind) }
        return .object(fields)
    }
}
