/// Why a plan file cannot be used: a code to branch on and a message saying what to do.
public struct PlanError: Error, Sendable, CustomStringConvertible, Equatable {
    public struct Code: RawRepresentable, Hashable, Sendable {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        /// The file cannot be read or written.
        public static let io = Code(rawValue: "plan_io")
        /// The file is not a hubscript plan (not JSON, no `format`, a field missing).
        public static let notAPlan = Code(rawValue: "plan_invalid")
        /// A plan of a format version this hubscript does not read.
        public static let unsupportedFormat = Code(rawValue: "plan_format_unsupported")
        /// The recipe changed since the plan was made.
        public static let recipeChanged = Code(rawValue: "plan_recipe_changed")
        /// The plan was made for another profile.
        public static let profileDiffers = Code(rawValue: "plan_profile_differs")
        /// The plan was made with other params.
        public static let paramsDiffer = Code(rawValue: "plan_params_differ")
    }

    public let code: Code
    public let message: String

    public init(_ code: Code, _ message: String) {
        self.code = code
        self.message = message
    }

    public var description: String { message }
}
