import Foundation

extension PreparedRecipe {
    /// A recipe the host made itself (not read from disk), with its manifest validated
    /// and no parameters: `hubscript eval` and `repl` run their session this way.
    public init(file: RecipeFile) throws {
        self.file = file
        manifest = try RecipeManifest.load(from: file)
        params = try ParamValues(manifest: manifest, cli: [], file: [:])
    }
}
