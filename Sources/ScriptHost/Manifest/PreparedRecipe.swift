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
            let data = try Self.readParamsFile(paramsFile)
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

    /// The bytes of the params file at `path`, refused past `ParamValues.maxBytes`
    /// before it is read whole: a regular file by its size, anything else (a pipe,
    /// `--params-file <(…)`) as soon as it gives more.
    static func readParamsFile(_ path: String) throws -> Data {
        let limit = ParamValues.maxBytes
        func tooLarge(_ size: String) -> ManifestError {
            ManifestError("""
                the params file \(path) is \(size); a params file holds at most \(ParamValues.maxBytesText) (parameters \
                are journalled with the run). Pass large data as a file parameter (type = "file": its path is \
                journalled, the recipe reads the file)
                """)
        }
        var status = stat()
        if stat(path, &status) == 0, (status.st_mode & S_IFMT) == S_IFREG, Int(status.st_size) > limit {
            throw tooLarge(ByteCount.text(Int(status.st_size)))
        }
        do { return Data(try FileBytes.read(path, atMost: limit)) } catch is FileBytes.TooLong {
            throw tooLarge("larger than \(ParamValues.maxBytesText)")
        } catch {
            throw ManifestError("cannot read the params file \(path): \(FileErrorText.reason(error, path: path))")
        }
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
