import Foundation
import SystemText

/// A recipe read from disk with its manifest and parameters validated — everything
/// checked before any of its body runs.
public struct PreparedRecipe: Sendable {
    public let file: RecipeFile
    public let manifest: RecipeManifest
    public let params: ParamValues

    /// Reads `path`, validates the manifest, and validates `cliParams` (`--param`)
    /// over `paramsFile` (`--params-file`, a JSON object).
    /// Throws `ScriptFailure` (unreadable file) or `ManifestError` (exit code 2 either way).
    public init(path: String, cliParams: [(String, String)] = [], paramsFile: String? = nil) throws {
        file = try RecipeFile(path: path)
        manifest = try RecipeManifest.load(from: file)
        var fileValues: [String: ScriptValue] = [:]
        if let paramsFile {
            let data: Data
            do { data = Data(try FileBytes.read(paramsFile)) } catch {   // never waits on a FIFO
                throw ManifestError("cannot read the params file \(paramsFile): \(FileErrorText.reason(error, path: paramsFile))")
            }
            do {
                guard case .object(let o) = try JSONCodec.decode(data) else {
                    throw ManifestError("the params file \(paramsFile) must hold a JSON object of name: value")
                }
                fileValues = o
            } catch let e as JSONCodec.Error {
                throw ManifestError("the params file \(paramsFile) is not valid JSON: \(e.message)")
            }
        }
        params = try ParamValues(manifest: manifest, cli: cliParams, file: fileValues)
    }

    /// Parses `k=v` strings from the command line.
    public static func parseParamArguments(_ args: [String]) throws -> [(String, String)] {
        try args.map { arg in
            guard let eq = arg.firstIndex(of: "="), eq != arg.startIndex else {
                throw ManifestError("--param takes name=value, got '\(arg)'")
            }
            return (String(arg[..<eq]), String(arg[arg.index(after: eq)...]))
        }
    }
}
