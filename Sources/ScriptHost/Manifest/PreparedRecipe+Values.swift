import Foundation

extension PreparedRecipe {
    /// Reads `path`, validates the manifest, and validates `values` — params already
    /// typed (a journalled run's, a plan's) — as a params file would be. A list item that
    /// contains a comma stays one item, which `--param name=a,b` could not express.
    public init(path: String, paramValues values: [String: ScriptValue]) throws {
        file = try RecipeFile(path: path)
        manifest = try RecipeManifest.load(from: file)
        params = try ParamValues(manifest: manifest, cli: [], file: values)
    }
}
