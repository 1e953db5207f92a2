import Foundation
import HubClient
import ScriptHost
import SystemText
import Configuration
import Runs

/// `hubscript doctor [--profile P] [--json]`: one line per check — the configuration,
/// each profile, the vault, the journal, each Hub (TLS, credential, clock) and each
/// Dispatch target — `ok` or what is wrong and what to do. Exit 0 when all are ok, 1
/// otherwise. Never shows a secret; each check is bounded in time.
struct DoctorCommand: Command {
    static let configuration = CommandConfiguration(
        name: "doctor", abstract: "Check the configuration, vault, journal, Hub and Dispatch; say what to fix.",
        usage: "[--profile P] [--json] [--timeout SECONDS]",
        options: [
            OptionSpec(name: "json", valueName: nil, help: "Print one JSON object: {ok, checks: [{name, ok, detail|problem}]}."),
            OptionSpec(name: "timeout", valueName: "seconds", help: "The most one check may take (default 15)."),
        ] + CommonOptions.specs,
        discussion: """
        Checks, each on one line (ok, or what is wrong and what to do):
          config       found, and trusted (yours, writable by nobody else)
          profile 'P'  resolves: its credential can be read (vault entry, environment, session)
          vault        absent and not needed, or opens with the key from the environment
          journal      opens and passes SQLite's quick check (PostgreSQL: connects, schema)
          hub 'P'      answers, over TLS with the CAs the profile trusts, and accepts the credential
          clock 'P'    this machine's clock against the Hub's Date header (at most 60 s apart)
          dispatch     each Dispatch target of the profile accepts connections
        Without --profile every profile of the configuration is checked. Reads only.
        Exit codes: 0 everything is ok, 1 something is not, 2 a usage mistake.
        """)

    let arguments: ParsedArguments
    let json: Bool
    let timeout: Double

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("doctor takes no arguments") }
        self.arguments = arguments
        json = arguments.flag("json")
        if let text = arguments.value("timeout") {
            guard let seconds = Double(text), seconds.isFinite, seconds >= 1, seconds <= 600 else {
                throw UsageError("--timeout must be a number of seconds from 1 to 600, got '\(TerminalText.field(text))'")
            }
            timeout = seconds
        } else {
            timeout = 15
        }
    }

    func run() throws -> Int32 {
        let checks = Self.checks(arguments, timeout: timeout) { check in
            if !json { Console.out(Self.line(check)) }
        }
        let ok = checks.allSatisfy(\.isOK)
        if json {
            let object: ScriptValue = .object([
                "ok": .bool(ok),
                "checks": .array(checks.map { check in
                    var fields: [String: ScriptValue] = ["name": .string(check.name), "ok": .bool(check.isOK)]
                    if let problem = check.problem { fields["problem"] = .string(problem) } else { fields["detail"] = .string(check.detail) }
                    return .object(fields)
                }),
            ])
            Console.out(try JSONCodec.encode(object) + "\n")
        } else {
            let failed = checks.filter { !$0.isOK }.count
            Console.err(failed == 0 ? "doctor: all \(checks.count) checks ok\n"
                                    : "doctor: \(failed) of \(checks.count) checks failed\n")
        }
        return ok ? ExitCode.success : ExitCode.recipeFailed
    }

    /// `ok    journal  /state/journal.sqlite (…)` or `FAIL  vault  …`.
    static func line(_ check: DoctorCheck) -> String {
        let text = check.problem ?? check.detail
        return (check.isOK ? "ok    " : "FAIL  ") + TerminalText.field(check.name) + ": " + TerminalText.line(text) + "\n"
    }

    /// Runs every check in order, handing each to `report` as it ends.
    static func checks(_ arguments: ParsedArguments, timeout: Double, report: (DoctorCheck) -> Void) -> [DoctorCheck] {
        var all: [DoctorCheck] = []
        func add(_ check: DoctorCheck) { all.append(check); report(check) }
        let common: CommonOptions.Values
        do {
            common = try CommonOptions.Values(arguments)
        } catch {
            add(.fail("config", "\(error)"))
            return all
        }
        if let file = common.configuration.file {
            add(.ok("config", "\(file.path) (trusted: yours or root's, writable by nobody else)"))
        } else {
            add(.ok("config", "no configuration file found; the built-in sandbox is used (README, \"Profiles\")"))
        }
        let names: [String]
        if let chosen = common.profile {
            names = [chosen]
        } else {
            names = common.hub.profiles.isEmpty ? [HubConfig.builtinSandboxName] : common.hub.profiles.keys.sorted()
        }
        var needVault: [String] = []
        var resolving: [String] = []
        for name in names {
            let label = "profile '\(name)'"
            guard let (_, setting) = try? common.hub.profile(named: name) else {
                do { _ = try common.hub.profile(named: name) } catch { add(.fail(label, "\(error)")) }
                continue
            }
            if case .hub(let profile) = setting {
                if case .apiKey(.reference(let entry)) = profile.auth { needVault.append("profile '\(name)' (api_key_ref \(entry))") }
                if let ref = profile.dispatchTokenRef, !ref.hasPrefix("env:") { needVault.append("profile '\(name)' (dispatch_token_ref \(ref))") }
            }
            let origin = CredentialOrigin.of(setting, configPath: common.hub.source?.path)
            do {
                _ = try common.with(profile: name).connect(quiet: true)
                add(.ok(label, "resolves; credential from \(origin.phrase)"))
                resolving.append(name)
            } catch {
                add(.fail(label, "\(error)"))
            }
        }
        add(DoctorChecks.vault(state: common.state, needed: needVault))
        BoundedCheck.run("journal", seconds: timeout) { [DoctorChecks.journal(common)] }.forEach(add)
        for name in resolving {
            BoundedCheck.run("hub '\(name)'", seconds: timeout) { DoctorChecks.hub(common, profile: name) }.forEach(add)
            for check in DoctorChecks.dispatch(common, profile: name, timeout: min(timeout, 10)) { add(check) }
        }
        return all
    }
}
