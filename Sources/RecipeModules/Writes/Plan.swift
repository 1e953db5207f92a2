import Foundation
import ScriptHost
import RunJournal

/// The writes a `hubscript plan` run would make, as `hubscript apply` replays them.
/// Its file form is described in `Plan+File.swift`.
public struct Plan: Sendable, Equatable {
    /// The file format this code writes and reads. `/2`: a create's id is a numbered
    /// placeholder (`usr_planned_1`) and the write that creates it says so (`creates`);
    /// a `/1` plan named every new user `usr_planned` and is refused (make a new plan).
    public static let format = "hubscript-plan/2"

    /// The plan run's id; `apply` runs under it so derived keys are the same.
    public var runID: String
    /// The recipe's absolute path (apply finds it from any folder).
    public var recipePath: String
    /// The recipe's path as people see it: relative to the working directory when inside it.
    public var recipeDisplayPath: String { DisplayPath.relative(URL(fileURLWithPath: recipePath)) }
    public var recipeSHA256: String
    public var profile: String
    /// The validated params (an object).
    public var params: ScriptValue
    /// When the plan was made (stored to the second).
    public var createdAt: Date
    /// In sequence order, numbered from 1.
    public var writes: [PlannedWrite]
    public var counts: RunCounts

    public init(runID: String, recipePath: String, recipeSHA256: String, profile: String, params: ScriptValue,
                createdAt: Date, writes: [PlannedWrite], counts: RunCounts) {
        self.runID = runID
        self.recipePath = recipePath
        self.recipeSHA256 = recipeSHA256
        self.profile = profile
        self.params = params
        self.createdAt = createdAt
        self.writes = writes
        self.counts = counts
    }

    /// Refuses to apply the plan to another recipe version, profile or params, in that
    /// order, naming what differs and how to make a plan that fits.
    /// - Throws: `PlanError` with `.recipeChanged`, `.profileDiffers` or `.paramsDiffer`.
    public func check(recipeSHA256 current: String, profile currentProfile: String, params currentParams: ScriptValue) throws {
        if current != recipeSHA256 {
            throw PlanError(.recipeChanged, """
                the plan was made with another version of \(recipeDisplayPath) (sha256 \(recipeSHA256.prefix(12))…, \
                now \(current.prefix(12))…); nothing was sent. Make a new plan with hubscript plan \(recipeDisplayPath) \
                and apply that one.
                """)
        }
        if currentProfile != profile {
            throw PlanError(.profileDiffers, """
                the plan was made for profile "\(profile)", not "\(currentProfile)"; nothing was sent. Apply it \
                with --profile \(profile), or make a new plan with hubscript plan \(recipeDisplayPath) --profile \(currentProfile).
                """)
        }
        let planParams = (try? JSONCodec.encode(params)) ?? ""
        let nowParams = (try? JSONCodec.encode(currentParams)) ?? "?"
        if planParams != nowParams {
            throw PlanError(.paramsDiffer, """
                the plan was made with other params (plan → now: \(BodyDiff.summary(params, currentParams))); \
                nothing was sent. Apply it with the plan's params, or make a new plan with hubscript plan \
                \(recipeDisplayPath) and these params.
                """)
        }
    }
}
