/// What the command line already says that the dynamic names depend on: the
/// configuration and state folder it names, and the recipe it runs.
public struct CompletionContext: Sendable, Equatable {
    /// `--config FILE`, as written.
    public var config: String?
    /// `--state-dir DIR`, as written.
    public var stateDirectory: String?
    /// The recipe on the command line (`FILE.lua` or `LIB:RECIPE`), as written.
    public var recipe: String?

    public init(config: String? = nil, stateDirectory: String? = nil, recipe: String? = nil) {
        self.config = config
        self.stateDirectory = stateDirectory
        self.recipe = recipe
    }
}

/// A recipe parameter, for `--param NAME=`.
public struct CompletionParameter: Sendable, Equatable {
    public let name: String
    /// The values worth offering after `NAME=` (`true`, `false` for a boolean).
    public let values: [String]

    public init(name: String, values: [String] = []) {
        self.name = name
        self.values = values
    }
}

/// Where the names only the program knows come from. Each answers what it can read
/// now, without writing anything and without asking anything; a source it cannot read
/// (no configuration, no journal yet, a broken file) gives no names, never an error:
/// completion must not fail loudly in the middle of a command line.
public protocol CompletionSources {
    func profiles(_ context: CompletionContext) -> [String]
    func jobs(_ context: CompletionContext) -> [String]
    /// Most recent first.
    func runIDs(_ context: CompletionContext) -> [String]
    /// `LIB:RECIPE` names.
    func libraryRecipes(_ context: CompletionContext) -> [String]
    func libraries(_ context: CompletionContext) -> [String]
    /// The parameters of `context.recipe`.
    func parameters(_ context: CompletionContext) -> [CompletionParameter]
}
