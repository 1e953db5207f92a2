import Foundation

/// Turns parameter input (command-line strings or JSON values) into typed values.
public enum ParamCoercion {
    struct Mismatch: Error { let expected: String }

    static func article(_ kind: ParamSpec.Kind) -> String {
        switch kind {
        case .string: "a string"
        case .number: "a number"
        case .integer: "an integer"
        case .boolean: "a boolean (true or false)"
        case .list: "a list of strings"
        case .file: "a file path"
        case .table: "a table (a JSON object)"
        }
    }

    /// A JSON or Lua value as `kind`.
    static func coerce(_ value: ScriptValue, to kind: ParamSpec.Kind) throws -> ScriptValue {
        switch (kind, value) {
        case (.string, .string), (.file, .string), (.boolean, .bool), (.integer, .integer), (.number, .number):
            return value
        case (.number, .integer(let i)): return .number(Double(i))
        case (.integer, .number(let d)) where Int64(exactly: d) != nil: return .integer(Int64(exactly: d)!)
        case (.list, .array(let items)) where items.allSatisfy({ $0.stringValue != nil }): return value
        case (.list, .object(let o)) where o.isEmpty: return .array([])
        case (.table, .object): return value
        case (.table, .array(let a)) where a.isEmpty: return .object([:])
        default: throw Mismatch(expected: article(kind))
        }
    }

    /// A command-line string as `kind`.
    static func parse(_ text: String, as kind: ParamSpec.Kind) throws -> ScriptValue {
        switch kind {
        case .string, .file: return .string(text)
        case .integer:
            guard let i = Int64(text.trimmingCharacters(in: .whitespaces)) else { throw Mismatch(expected: article(kind)) }
            return .integer(i)
        case .number:
            guard let d = Double(text.trimmingCharacters(in: .whitespaces)), d.isFinite else { throw Mismatch(expected: article(kind)) }
            return .number(d)
        case .boolean:
            switch text.lowercased() {
            case "true", "yes", "1", "on": return .bool(true)
            case "false", "no", "0", "off": return .bool(false)
            default: throw Mismatch(expected: article(kind))
            }
        case .list:
            if text.isEmpty { return .array([]) }
            return .array(text.split(separator: ",", omittingEmptySubsequences: false)
                .map { .string($0.trimmingCharacters(in: .whitespaces)) })
        case .table:
            guard let value = try? JSONCodec.decode(Data(text.utf8)) else { throw Mismatch(expected: article(kind)) }
            return try coerce(value, to: .table)
        }
    }
}

/// The recipe's parameter values, validated against its manifest.
public struct ParamValues: Sendable {
    public let values: [String: ScriptValue]

    /// The most a run's parameters may hold, as the canonical JSON the journal keeps
    /// (every route: `--param`, `--params-file`, a job's or trigger's params, a resume),
    /// and the most a params file may hold: 1 MiB. Parameters are journalled with the
    /// run and read back by every listing; large data goes in a `file` parameter (only
    /// its path is journalled).
    public static let maxBytes = 1 << 20
    static let maxBytesText = "1 MiB"

    /// Validates `cli` (`--param k=v`) over `file` (`--params-file`). A `list` parameter
    /// given several times collects every value; any other is refused if given twice.
    /// `file` params must name readable regular files; they become absolute paths.
    public init(manifest: RecipeManifest, cli: [(String, String)], file: [String: ScriptValue] = [:]) throws {
        let specs = Dictionary(uniqueKeysWithValues: manifest.params.map { ($0.name, $0) })
        let known = manifest.params.isEmpty ? "this recipe takes no parameters"
            : "this recipe takes: " + manifest.params.map(\.name).joined(separator: ", ")
        var result: [String: ScriptValue] = [:]
        for (name, value) in file.sorted(by: { $0.key < $1.key }) {
            guard let spec = specs[name] else { throw ManifestError("unknown parameter '\(name)' in the params file (\(known))") }
            if case .null = value { continue }
            do { result[name] = try ParamCoercion.coerce(value, to: spec.kind) } catch let e as ParamCoercion.Mismatch {
                throw ManifestError("parameter '\(name)' must be \(e.expected), got \(value.luaTypeName) in the params file")
            }
        }
        var given: [String: String] = [:]
        for (name, text) in cli {
            guard let spec = specs[name] else {
                throw ManifestError("unknown parameter '\(name)'\(DidYouMean.hint(for: name, among: manifest.params.map(\.name))) (\(known))")
            }
            let value: ScriptValue
            do { value = try ParamCoercion.parse(text, as: spec.kind) } catch let e as ParamCoercion.Mismatch {
                throw ManifestError("parameter '\(name)' must be \(e.expected), got '\(text)'")
            }
            if let first = given[name] {
                // A list collects every --param; any other parameter takes one value, so
                // a second one is a mistake, not an override.
                guard spec.kind == .list, case .array(let earlier)? = result[name], case .array(let more) = value else {
                    throw ManifestError("parameter '\(name)' given twice (--param \(name)=\(first) and --param \(name)=\(text)); it takes one value (\(spec.kind.rawValue))")
                }
                result[name] = .array(earlier + more)
            } else {
                given[name] = text
                result[name] = value
            }
        }
        for spec in manifest.params {
            if result[spec.name] == nil, let d = spec.defaultValue { result[spec.name] = d }
            if result[spec.name] == nil && spec.required {
                let about = spec.description.map { ": \($0)" } ?? ""
                throw ManifestError("missing required parameter '\(spec.name)' (\(spec.kind.rawValue)\(about)); pass --param \(spec.name)=…")
            }
            if spec.kind == .file, let path = result[spec.name]?.stringValue {
                result[spec.name] = .string(try Self.checkFile(path, param: spec.name))
            }
        }
        let size = (try? JSONCodec.encode(.object(result)).utf8.count) ?? 0
        if size > Self.maxBytes {
            let largest = result.max { ((try? JSONCodec.encode($0.value).utf8.count) ?? 0) < ((try? JSONCodec.encode($1.value).utf8.count) ?? 0) }
            throw ManifestError("""
                the parameters take \(ByteCount.text(size)) (largest: '\(largest?.key ?? "")'); a run's parameters hold at \
                most \(Self.maxBytesText) (they are journalled with the run). Pass large data as a file parameter \
                (type = "file": its path is journalled, the recipe reads the file)
                """)
        }
        values = result
    }

    static func checkFile(_ path: String, param: String) throws -> String {
        var isDirectory: ObjCBool = false
        let url = URL(fileURLWithPath: path)
        guard FileManager.default.fileExists(atPath: url.path, isDirectory: &isDirectory) else {
            throw ManifestError("parameter '\(param)': file \(path) does not exist")
        }
        guard !isDirectory.boolValue, FileManager.default.isReadableFile(atPath: url.path) else {
            throw ManifestError("parameter '\(param)': \(path) is not a readable file")
        }
        return url.standardizedFileURL.path
    }
}
