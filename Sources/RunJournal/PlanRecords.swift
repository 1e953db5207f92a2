import Foundation
import SQLiteKit
import SystemText

/// A saved plan as the journal keeps it (`hubscript plan --out`), with what people
/// decided about it. Its id is the plan's run id (the `run_id` of the plan file).
public struct PlanRecord: Sendable, Equatable {
    /// Who made the plan: the Hub user of the plan's profile when its session said
    /// (`GET /users/me`), else the operating-system user who ran `hubscript plan`.
    public enum MakerKind: String, Sendable { case hub, os }

    /// `waiting` until it is rejected or applied; "approved" is not a stored status but
    /// `approvals(for:)` reaching `required`.
    public enum Status: String, Sendable { case waiting, rejected, applied }

    public let id: String
    /// SHA-256 of the plan's canonical JSON when it was recorded.
    public let contentSHA256: String
    /// Where the plan file was saved (absolute).
    public let path: String
    public let recipePath: String
    public let profile: String
    public let maker: String
    public let makerKind: MakerKind
    public let writes: Int
    /// The platform permissions the plan's writes need (the recipe's write needs), sorted.
    public let permissions: [String]
    /// The approvals the configuration required when the plan was made.
    public let required: Int
    public let status: Status
    public let createdAt: Date
    /// Every decision, oldest first.
    public let decisions: [PlanDecision]

    public init(id: String, contentSHA256: String, path: String, recipePath: String, profile: String, maker: String,
                makerKind: MakerKind, writes: Int, permissions: [String], required: Int,
                status: Status = .waiting, createdAt: Date = Date(), decisions: [PlanDecision] = []) {
        self.id = id
        self.contentSHA256 = contentSHA256
        self.path = path
        self.recipePath = recipePath
        self.profile = profile
        self.maker = maker
        self.makerKind = makerKind
        self.writes = writes
        self.permissions = permissions.sorted()
        self.required = required
        self.status = status
        self.createdAt = createdAt
        self.decisions = decisions
    }

    /// The approvals given to the plan's content `sha256`, oldest first.
    public func approvals(for sha256: String) -> [PlanDecision] {
        decisions.filter { $0.kind == .approved && $0.contentSHA256 == sha256 }
    }

    /// The rejection, if the plan was rejected.
    public var rejection: PlanDecision? { decisions.last { $0.kind == .rejected } }

    /// `waiting`, `approved` (enough approvals of its recorded content for `required`),
    /// `rejected` or `applied`: what the plan lists show.
    public func shownStatus(required: Int) -> String {
        if status == .waiting, approvals(for: contentSHA256).count >= required { return "approved" }
        return status.rawValue
    }
}

/// One person's decision about a plan, or an apply.
public struct PlanDecision: Sendable, Equatable {
    public enum Kind: String, Sendable { case approved, rejected, applied, applyFailed = "apply_failed" }
    public let kind: Kind
    /// The plan content the decision was about.
    public let contentSHA256: String
    /// A Hub user id (`usr_…`) for approvals and rejections; for an apply, the Hub user of
    /// the applying profile when known, else the operating-system user.
    public let person: String
    /// The person's email (or name) as the Hub gave it; nil when not known.
    public let personName: String?
    /// A rejection's reason.
    public let reason: String?
    /// An apply's exit code.
    public let exitCode: Int?
    public let decidedAt: Date
}

/// Why the journal did not record a decision about a plan, or why a plan may not be
/// applied. Exit code 3 at the CLI.
public typealias PlanApprovalError = CodedError<PlanApprovalErrorDomain>
public enum PlanApprovalErrorDomain: CodedErrorDomain {}

extension CodedError.Code where Domain == PlanApprovalErrorDomain {
    /// The journal holds no plan with this id.
    public static var notRecorded: Self { Self(rawValue: "plan_not_recorded") }
    /// The plan's content is not the content recorded (or approved).
    public static var changed: Self { Self(rawValue: "plan_changed") }
    public static var rejected: Self { Self(rawValue: "plan_rejected") }
    public static var alreadyApplied: Self { Self(rawValue: "plan_already_applied") }
    /// The approver made the plan.
    public static var maker: Self { Self(rawValue: "plan_approver_is_maker") }
    /// The approver lacks permissions the plan's writes need.
    public static var lacksPermissions: Self { Self(rawValue: "plan_approver_lacks_permissions") }
    public static var alreadyApproved: Self { Self(rawValue: "plan_already_approved") }
    /// Fewer approvals than required.
    public static var notApproved: Self { Self(rawValue: "plan_not_approved") }
    /// A command's argument names a recorded plan and a file of another plan.
    public static var ambiguousName: Self { Self(rawValue: "plan_name_ambiguous") }
}
