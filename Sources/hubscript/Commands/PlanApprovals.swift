import Foundation
import HubClient
import SystemText
import ScriptHost
import RunJournal
import RecipeModules
import Configuration

/// The two-person rule around saved plans (docs/approvals.md): a plan saved with
/// `hubscript plan --out` is recorded in the journal; `approve` and `reject` record
/// people's decisions, bound to the plan's content hash; `apply` checks them before it
/// sends anything.
enum PlanApprovals {
    /// Who ran this command on this machine: the operating-system user name.
    static var osUser: String {
        let name = ProcessInfo.processInfo.userName
        return name.isEmpty ? "uid \(geteuid())" : name
    }

    /// The approvals the configuration requires for `plan` needing `permissions`.
    static func required(_ config: LoadedConfiguration, plan: Plan, permissions: [String]) -> Int {
        config.approvals.required(recipeNames: ApprovalsConfig.recipeNames(path: plan.recipePath), profile: plan.profile,
                                  permissions: permissions, writes: plan.writes.count)
    }

    /// Records the plan just saved at `file` as waiting, its maker the Hub user of the
    /// plan's profile when its credential is a user session, else the OS user. The hash
    /// is of the plan read back from the file, so it is what `approve` and `apply` read.
    /// Returns the record and the approvals the configuration requires.
    static func record(savedAt file: URL, making: PlanMaking, config: LoadedConfiguration) throws -> (PlanRecord, Int) {
        let saved = try Plan.load(from: file)
        let permissions = HubGate.writePermissions(in: making.needs)
        let capabilities = try making.connection.client.capabilities()
        let (maker, kind): (String, PlanRecord.MakerKind) = capabilities.source == .userSession && capabilities.userID != nil
            ? (capabilities.userID!, .hub) : (osUser, .os)
        let required = required(config, plan: saved, permissions: permissions)
        let record = try making.journal.recordPlan(PlanRecord(
            id: saved.runID, contentSHA256: try saved.contentSHA256(), path: file.standardizedFileURL.path,
            recipePath: saved.recipePath, profile: saved.profile, maker: maker, makerKind: kind, writes: saved.writes.count,
            permissions: permissions, required: required))
        return (record, required)
    }

    /// A Hub user verified now: `GET /users/me` with the profile's session, and the
    /// permissions their roles grant.
    struct Person {
        let id: String
        let email: String?
        let permissions: Set<String>
    }

    /// Verifies the person behind `common`'s profile. Throws `PlanApprovalRefusal` when
    /// the profile is not a user session.
    static func verifiedPerson(_ common: CommonOptions.Values, action: String) throws -> Person {
        let connection = try common.connect(quiet: true)
        let me: HubJSON
        do { me = try connection.client.get("/users/me").json } catch let error as HubError where error.code == HubError.Code.userTokenRequired {
            throw PlanApprovalRefusal("""
                \(action) needs a person: profile '\(connection.profileName)' uses an API key, not a user's session. \
                Sign in with hubscript login --profile YOUR_PROFILE and use --profile YOUR_PROFILE.
                """)
        }
        guard let id = me["id"]?.stringValue, !id.isEmpty else {
            throw PlanApprovalRefusal("\(action): the Hub did not say who profile '\(connection.profileName)' is (GET /users/me has no id)")
        }
        let capabilities = try connection.client.capabilities(refresh: true)
        guard capabilities.source == .userSession, capabilities.userID == id else {
            throw PlanApprovalRefusal("""
                \(action) needs a person: profile '\(connection.profileName)' is not a user's session. \
                Sign in with hubscript login --profile YOUR_PROFILE and use --profile YOUR_PROFILE.
                """)
        }
        return Person(id: id, email: me["email"]?.stringValue, permissions: capabilities.permissions)
    }

    /// The plan a command names: a plan file (its run id and the hash of its content as
    /// it is now), or a plan id (the recorded content). An argument that is both a
    /// recorded plan's id and the name of a file holding another plan is refused
    /// (`.ambiguousName`): a decision never lands on a plan other than the one named.
    static func named(_ argument: String, journal: Journal) throws -> (id: String, sha256: String) {
        if FileManager.default.fileExists(atPath: argument) {
            let plan = try Plan.load(from: URL(fileURLWithPath: argument))
            if plan.runID != argument, try journal.plan(argument) != nil {
                throw PlanApprovalError(.ambiguousName, """
                    \(argument) names two plans: the plan \(argument) the journal holds, and the file \(argument) here, \
                    which holds plan \(plan.runID); nothing was recorded. Give the file as ./\(argument), or the plan id \
                    from another folder.
                    """)
            }
            return (plan.runID, try plan.contentSHA256())
        }
        guard let record = try journal.plan(argument) else {
            throw PlanApprovalError(.notRecorded, """
                \(argument) is neither a plan file nor a plan the journal holds \
                (hubscript plans list shows the recorded plans)
                """)
        }
        return (record.id, record.contentSHA256)
    }
}

/// A refusal of `approve` or `reject` that is not the journal's: exit code 3.
struct PlanApprovalRefusal: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// `hubscript approve PLAN`: records the approval of a verified Hub user.
struct ApproveCommand: Command {
    static let configuration = CommandConfiguration(
        name: "approve",
        abstract: "Approve a saved plan as a signed-in Hub user (the two-person rule before apply).",
        usage: "PLAN.json|PLAN_ID --profile SESSION_PROFILE",
        options: CommonOptions.specs,
        discussion: """
        The approver is the Hub user of the profile's session, asked now (GET /users/me); they must not be \
        the plan's maker and must hold every permission the plan's writes need. The approval is bound to \
        the plan's content: a plan changed afterwards needs new approvals. See docs/approvals.md.
        """)

    let plan: String
    let common: CommonOptions.Values

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one PLAN.json or plan id") }
        plan = arguments.positionals[0]
        common = try CommonOptions.Values(arguments)
    }

    func run() throws -> Int32 {
        do {
            let journal = try common.openJournal()
            let (id, sha) = try PlanApprovals.named(plan, journal: journal)
            let person = try PlanApprovals.verifiedPerson(common, action: "approve")
            let record = try journal.approvePlan(id, contentSHA256: sha, person: person.id, personName: person.email,
                                                 permissions: person.permissions)
            let required = max(record.required, PlanApprovals.requiredNow(common, record))
            let count = record.approvals(for: sha).count
            Console.out("approved plan \(TerminalText.field(id)) as \(TerminalText.field(person.email ?? person.id)): "
                        + "\(count) of \(required) approval\(required == 1 ? "" : "s")\n")
            return ExitCode.success
        } catch let refusal as PlanApprovalError {
            return PlanApprovalOutput.refuse("approve", refusal.message)
        } catch let refusal as PlanApprovalRefusal {
            return PlanApprovalOutput.refuse("approve", refusal.description)
        }
    }
}

/// `hubscript reject PLAN --reason TEXT`: records a refusal; the plan can no longer be applied.
struct RejectCommand: Command {
    static let configuration = CommandConfiguration(
        name: "reject",
        abstract: "Reject a saved plan with a reason: it can no longer be applied.",
        usage: "PLAN.json|PLAN_ID --reason TEXT --profile SESSION_PROFILE",
        options: [OptionSpec(name: "reason", valueName: "text", help: "Why (recorded in the journal, shown with the plan).")]
            + CommonOptions.specs,
        discussion: """
        The person rejecting is the Hub user of the profile's session, asked now; they must be the plan's \
        maker (withdrawing it) or hold every permission the plan's writes need. See docs/approvals.md.
        """)

    let plan: String
    let reason: String
    let common: CommonOptions.Values

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one PLAN.json or plan id") }
        guard let reason = arguments.value("reason"), !reason.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw UsageError("--reason TEXT is required: say why the plan is rejected")
        }
        plan = arguments.positionals[0]
        self.reason = reason
        common = try CommonOptions.Values(arguments)
    }

    func run() throws -> Int32 {
        do {
            let journal = try common.openJournal()
            let (id, sha) = try PlanApprovals.named(plan, journal: journal)
            let person = try PlanApprovals.verifiedPerson(common, action: "reject")
            if let record = try journal.plan(id), !(record.makerKind == .hub && record.maker == person.id) {
                let lacking = record.permissions.filter { !person.permissions.contains($0) }
                if !lacking.isEmpty {
                    throw PlanApprovalError(.lacksPermissions, """
                        \(person.email ?? person.id) lacks what plan \(id)'s writes need: \(lacking.joined(separator: ", ")); \
                        only its maker or a person holding \(record.permissions.joined(separator: ", ")) can reject it
                        """)
                }
            }
            try journal.rejectPlan(id, contentSHA256: sha, person: person.id, personName: person.email, reason: reason)
            Console.out("rejected plan \(TerminalText.field(id)) as \(TerminalText.field(person.email ?? person.id)): it will not be applied\n")
            return ExitCode.success
        } catch let refusal as PlanApprovalError {
            return PlanApprovalOutput.refuse("reject", refusal.message)
        } catch let refusal as PlanApprovalRefusal {
            return PlanApprovalOutput.refuse("reject", refusal.description)
        }
    }
}

enum PlanApprovalOutput {
    /// Prints `hubscript COMMAND: MESSAGE` and returns 3.
    static func refuse(_ command: String, _ message: String) -> Int32 {
        Console.err("hubscript \(command): \(TerminalText.text(message))\n")
        return ExitCode.capabilityDenied
    }
}

extension PlanApprovals {
    /// The approvals the configuration requires now for the recorded plan.
    static func requiredNow(_ common: CommonOptions.Values, _ record: PlanRecord) -> Int {
        common.configuration.approvals.required(recipeNames: ApprovalsConfig.recipeNames(path: record.recipePath),
                                                profile: record.profile, permissions: record.permissions, writes: record.writes)
    }
}

/// `hubscript apply`'s check of the approvals before anything is sent, and its record
/// of the apply afterwards.
struct PlanApplyGate {
    let plan: Plan
    let sha256: String
    let common: CommonOptions.Values
    /// Whether the journal holds the plan (then the apply is recorded with it).
    let recorded: Bool

    /// Refuses (`PlanApprovalError`, exit 3) a plan that the configuration's approval
    /// rules cover and that lacks approvals of its present content, or that was rejected.
    /// The permissions a rule sees are the recorded ones, else the recipe's write needs.
    static func check(_ plan: Plan, params: [String: ScriptValue], common: CommonOptions.Values) throws -> PlanApplyGate {
        let sha = try plan.contentSHA256()
        let journal = try common.openJournal()
        let record = try journal.plan(plan.runID)
        var permissions = record?.permissions ?? []
        if record == nil, !common.configuration.approvals.rules.isEmpty,
           let prepared = try? PreparedRecipe(path: plan.recipePath, paramValues: params) {
            permissions = HubGate.writePermissions(in: prepared.manifest.needs)
        }
        let required = PlanApprovals.required(common.configuration, plan: plan, permissions: permissions)
        _ = try journal.checkPlanMayApply(plan.runID, contentSHA256: sha, required: required)
        return PlanApplyGate(plan: plan, sha256: sha, common: common, recorded: record != nil)
    }

    /// Records the apply (by the OS user) with its exit code; a failure to record is
    /// reported, not fatal: the writes were sent or not whatever the record says.
    func recordApply(exitCode: Int32) {
        guard recorded else { return }
        do {
            try common.openJournal().recordPlanApply(plan.runID, contentSHA256: sha256, person: PlanApprovals.osUser,
                                                     exitCode: Int(exitCode))
        } catch {
            Console.err("\(Styled.warning) the apply of plan \(TerminalText.field(plan.runID)) was not recorded with the plan: \(TerminalText.text("\(error)"))\n")
        }
    }
}
