import Foundation
import SystemText
import HubClient
import Scheduler

/// A job from the configuration file, with its recipe found.
public struct ConfiguredJob: Sendable {
    public let definition: JobDefinition
    /// The recipe file: `recipe` resolved against the config file's folder.
    public let recipe: URL
    /// `recipe = "LIB:RECIPE"`: a recipe of one of the configuration's libraries,
    /// found (and its pin checked) when the job fires; `recipe` is then meaningless.
    public let library: LibraryRecipe.Name?

    public var name: String { definition.name }

    /// The recipe as people read it: `ops:offboard`, or the file's path.
    public var shownRecipe: String { library?.description ?? recipe.path }

    public init(definition: JobDefinition, recipe: URL, library: LibraryRecipe.Name? = nil) {
        self.definition = definition
        self.recipe = recipe
        self.library = library
    }
}

/// The `jobs = { … }` table of the configuration file, kept apart from `HubConfig`
/// (HubClient knows neither Lua nor the scheduler):
///
/// ```lua
/// jobs = {
///   ["nightly-sync"] = { recipe = "recipes/sync.lua", schedule = "30 2 * * *",
///                        timezone = "Europe/Berlin", params = { group = "ops" } },
/// }
/// ```
/// Each job is a `JobDefinition` (its fields and errors are the Scheduler's); a recipe
/// path is relative to the config file's folder and must exist, and a `profile` must be
/// one of the config's profiles (or `sandbox`), so a mistake shows when the file is read.
public struct JobsConfig: Sendable {
    /// The configuration file; nil when there is none.
    public let source: URL?
    /// The jobs, by name.
    public let jobs: [ConfiguredJob]

    public init(source: URL?, jobs: [ConfiguredJob]) {
        self.source = source
        self.jobs = jobs.sorted { $0.name < $1.name }
    }

    /// The job `name`, or an error that lists the jobs there are.
    public func job(named name: String) throws -> ConfiguredJob {
        if let job = jobs.first(where: { $0.name == name }) { return job }
        guard let source else {
            throw HubConfigError("no job '\(name)': no configuration file was found (jobs are defined in its jobs = { … } table)")
        }
        let known = jobs.isEmpty ? "it defines none" : "jobs: " + jobs.map(\.name).joined(separator: ", ")
        throw HubConfigError("no job '\(name)' in \(source.path) (\(known))")
    }
}
