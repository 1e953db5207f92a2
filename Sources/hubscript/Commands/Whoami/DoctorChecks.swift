import Foundation
import Synchronization
import SystemText
import HTTPKit
import HubClient
import RecipeModules
import RunJournal
import Runs
import ScriptHost

/// One line of `hubscript doctor`: what was checked, and `ok` with what was found, or
/// what is wrong and what to do.
struct DoctorCheck: Sendable, Equatable {
    let name: String
    /// nil: ok.
    let problem: String?
    let detail: String

    static func ok(_ name: String, _ detail: String) -> DoctorCheck { DoctorCheck(name: name, problem: nil, detail: detail) }
    static func fail(_ name: String, _ problem: String) -> DoctorCheck { DoctorCheck(name: name, problem: problem, detail: "") }

    var isOK: Bool { problem == nil }
}

/// Runs `body` on a thread of its own and waits at most `seconds` for it: a check that
/// hangs (a Hub that accepts and never answers, a PostgreSQL server out of reach) is
/// reported as such, and the next check runs. The thread is left to finish or to end
/// with the process.
enum BoundedCheck {
    static func run(_ name: String, seconds: Double, _ body: @escaping @Sendable () -> [DoctorCheck]) -> [DoctorCheck] {
        let result = Mutex<[DoctorCheck]?>(nil)
        let done = DispatchSemaphore(value: 0)
        let thread = Thread {
            let check = body()
            result.withLock { $0 = check }
            done.signal()
        }
        thread.stackSize = 1 << 22
        thread.start()
        guard done.wait(timeout: .now() + seconds) == .success, let check = result.withLock({ $0 }) else {
            return [.fail(name, "no answer within \(Int(seconds)) s; check the network (and HTTPS_PROXY) and that the server is up")]
        }
        return check
    }
}

/// The checks themselves, each independent of the others' outcome.
enum DoctorChecks {
    /// The vault: not needed, or it opens with the key from the environment.
    static func vault(state: StateDirectory, needed: [String]) -> DoctorCheck {
        let resolver = VaultAccess.resolver(state: state)
        let folder = VaultAccess.folderPath(state: state)
        guard resolver.exists else {
            if needed.isEmpty { return .ok("vault", "none at \(folder) (no profile needs one)") }
            return .fail("vault", "no vault at \(folder), and \(needed.joined(separator: ", ")) \(needed.count == 1 ? "reads" : "read") from it; "
                         + "make one: hubscript vault init, then hubscript vault set NAME")
        }
        do {
            let count = try resolver.withVault { try $0.list().count }
            return .ok("vault", "\(folder) opens (\(count) \(count == 1 ? "entry" : "entries"))")
        } catch let error as ScriptStructuredError where error.code == "vault_locked" && needed.isEmpty {
            // Locked for lack of a key, and no profile reads it: only recipes' secrets would.
            return .ok("vault", "\(folder) exists, locked (no key in the environment); no profile needs it, but a recipe that reads "
                       + "vault.secret does: set HUBSCRIPT_VAULT_KEY, HUBSCRIPT_VAULT_KEY_FILE or HUBSCRIPT_VAULT_PASSPHRASE")
        } catch {
            return .fail("vault", "\(folder): \(error)")
        }
    }

    /// The journal opens and passes its check (SQLite's quick check; a PostgreSQL
    /// journal connects and has this hubscript's schema).
    static func journal(_ common: CommonOptions.Values) -> DoctorCheck {
        let location: JournalLocation
        do { location = try common.journalLocation() } catch { return .fail("journal", "\(error)") }
        do {
            let journal = try Journal.openChecked(location, check: .always)
            _ = try journal.fires(limit: 1)
            journal.closeCleanly()
            let what = location.isShared ? "connects, schema \(Journal.schemaVersion)" : "quick check ok, schema \(Journal.schemaVersion)"
            return .ok("journal", "\(location.description) (\(what))")
        } catch {
            let message = "\(error)"
            return .fail("journal", message.contains(location.description) ? message : "\(location.description): \(message)")
        }
    }

    /// The Hub of profile `name` answers, over TLS where its URL says so, and accepts the
    /// credential; with the clock skew its `Date` header shows.
    static func hub(_ common: CommonOptions.Values, profile name: String) -> [DoctorCheck] {
        let label = "hub '\(name)'"
        let witness = HubReachWitness()
        let connection: HubConnection
        do {
            connection = try common.with(profile: name).connect(quiet: true, observe: witness.observer(then: nil))
        } catch {
            return [.fail(label, "\(error)")]
        }
        let reach = HubReachContext(common: common, profile: name, witness: witness)
        let started = Date()
        let identity: HubIdentity
        do {
            identity = try HubIdentity.read(connection)
        } catch let error as HubError {
            if let failure = reach.failure(for: error) { return [.fail(label, failure.what + "; " + failure.remedy)] }
            return [.fail(label, "\(error)")]
        } catch {
            return [.fail(label, "\(error)")]
        }
        let ms = Int(Date().timeIntervalSince(started) * 1000)
        var how = "answered in \(ms) ms"
        if case .hub(let profile)? = try? common.hub.profile(named: name).setting {
            how = profile.hubURL.scheme == "https"
                ? "\(profile.hubURL.absoluteString) answered over TLS, trusting \(trustPhrase(profile)), in \(ms) ms"
                : "\(profile.hubURL.absoluteString) answered (plain HTTP on this machine) in \(ms) ms"
        } else {
            how = "the built-in sandbox answered in \(ms) ms"
        }
        let who = identity.kind == "user" ? "user \(identity.email ?? identity.id ?? "?")" : "API key \(identity.id ?? "(id not in the profile)")"
        var checks: [DoctorCheck] = [.ok(label, "\(how); accepts the credential (\(who))")]
        checks.append(clock(name, hubDate: identity.hubDate, localDate: identity.localDate))
        return checks
    }

    static func trustPhrase(_ profile: HubProfile) -> String {
        if let ca = profile.caFile { return "ca_file \(ca)" }
        if let file = ProcessEnvironment.value("SSL_CERT_FILE"), !file.isEmpty { return "SSL_CERT_FILE \(file)" }
        if let dir = ProcessEnvironment.value("SSL_CERT_DIR"), !dir.isEmpty { return "SSL_CERT_DIR \(dir)" }
        return "the system's CAs"
    }

    /// This machine's clock against the Hub's `Date` header.
    static func clock(_ profile: String, hubDate: Date?, localDate: Date?) -> DoctorCheck {
        let label = "clock '\(profile)'"
        guard let hubDate, let localDate else { return .ok(label, "not measured: the Hub's answers carry no Date header") }
        let skew = ClockSkew(hubDate: hubDate, localDate: localDate)
        return skew.isTolerable ? .ok(label, skew.text) : .fail(label, skew.text)
    }

    /// Each Dispatch target of profile `name` accepts connections (TLS where its URL is https).
    static func dispatch(_ common: CommonOptions.Values, profile name: String, timeout: Double) -> [DoctorCheck] {
        var targets: [(String, DispatchTarget)] = []
        if let own = try? common.dispatchTarget(common.hub, profile: name) { targets.append(("dispatch '\(name)'", own)) }
        for target in common.hub.dispatchTargets(profile: name).keys.sorted() {
            targets.append(("dispatch '\(name)' target '\(target)'",
                            DispatchTarget.named(target, profile: name, in: common.hub, sandbox: { throw HubConfigError("unused") })))
        }
        return targets.compactMap { label, target in
            switch target.endpoint {
            case .sandbox: return .ok(label, "the built-in sandbox Dispatch (in process)")
            case .unconfigured: return nil
            case .server(let url, let ref):
                guard let host = url.host else { return .fail(label, "\(url.absoluteString) names no host") }
                let tls = url.scheme == "https"
                let port = UInt16(url.port ?? (tls ? 443 : 80))
                do {
                    try TCPConnectProbe.check(host: host, port: port, timeout: timeout, tls: tls)
                    return .ok(label, "\(url.absoluteString) accepts connections\(tls ? " over TLS" : ""); token from "
                               + WhoamiCommand.ProfileFacts.tokenPhrase(ref))
                } catch {
                    return .fail(label, "\(url.absoluteString): \(error); check that Dispatch is running there and the URL in the configuration")
                }
            }
        }
    }
}
