import SystemText
/// Why a plan file cannot be used.
public typealias PlanError = CodedError<PlanErrorDomain>
public enum PlanErrorDomain: CodedErrorDomain {}

extension CodedError.Code where Domain == PlanErrorDomain {
    /// The file cannot be read or written.
    public static var io: Self { Self(rawValue: "plan_io") }
    /// The file is not a hubscript plan (not JSON, no `format`, a field missing).
    public static var notAPlan: Self { Self(rawValue: "plan_invalid") }
    /// A plan of a format version this hubscript does not read.
    public static var unsupportedFormat: Self { Self(rawValue: "plan_format_unsupported") }
    /// The recipe changed since the plan was made.
    public static var recipeChanged: Self { Self(rawValue: "plan_recipe_changed") }
    /// The plan was made for another profile.
    public static var profileDiffers: Self { Self(rawValue: "plan_profile_differs") }
    /// The plan was made with other params.
    public static var paramsDiffer: Self { Self(rawValue: "plan_params_differ") }
}
