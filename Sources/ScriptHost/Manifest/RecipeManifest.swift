import Foundation

/// The declared header of a recipe: `recipe { name, version, description, params, needs, secrets, targets, limits }`.
public struct RecipeManifest: Sendable, Equatable {
    public var name: String
    public var version: String?
    public var description: String?
    /// Declared parameters, sorted by name.
    public var params: [ParamSpec]
    /// Permission keys the recipe may use (checked against Capabilities before the body runs).
    public var needs: [String]
    /// Vault entries the recipe may open with `vault.secret(NAME)`; any other is refused.
    public var secrets: [String] = []
    /// Named destinations the recipe may reach (`dispatch.connect("ops")`): each is defined
    /// by the configuration, which binds its URL and the credential it carries; a reviewer
    /// reads here every place the recipe can send to. Any other name is refused.
    public var targets: [String] = []
    public var limits: ManifestLimits

    public static let allowedKeys = ["name", "version", "description", "params", "needs", "secrets", "targets", "limits"]

    /// The most targets a manifest may list.
    public static let maxTargets = 32

    /// A target name: 1–64 of `A–Z a–z 0–9 _ -`, starting with a letter or digit (`ops`, `on-call`).
    public static func isTargetName(_ name: String) -> Bool {
        guard (1...64).contains(name.utf8.count), let first = name.utf8.first, first.isASCIIAlphanumeric else { return false }
        return name.utf8.allSatisfy { $0.isASCIIAlphanumeric || $0 == UInt8(ascii: "_") || $0 == UInt8(ascii: "-") }
    }

    /// A vault entry name: 1–128 of `A–Z a–z 0–9 . _ / -`, starting with a letter or
    /// digit, with no empty, `.` or `..` segment (`dispatch/ci`, `hub/prod-key`).
    public static func isSecretName(_ name: String) -> Bool {
        guard (1...128).contains(name.utf8.count), let first = name.utf8.first,
              first.isASCIIAlphanumeric,
              name.utf8.allSatisfy({ $0.isASCIIAlphanumeric || $0 == UInt8(ascii: ".") || $0 == UInt8(ascii: "_")
                  || $0 == UInt8(ascii: "/") || $0 == UInt8(ascii: "-") }) else { return false }
        return !name.split(separator: "/", omittingEmptySubsequences: false).contains { $0.isEmpty || $0 == "." || $0 == ".." }
    }
}

extension UInt8 {
    var isASCIIAlphanumeric: Bool {
        (UInt8(ascii: "a")...UInt8(ascii: "z")).contains(self) || (UInt8(ascii: "A")...UInt8(ascii: "Z")).contains(self)
            || (UInt8(ascii: "0")...UInt8(ascii: "9")).contains(self)
    }
}

/// `limits = { writes, timeout, memory_mb, instructions }` in a manifest.
public struct ManifestLimits: Sendable, Equatable {
    public var writes: Int?
    public var timeoutSeconds: Double?
    public var memoryMB: Int?
    public var instructions: Int64?

    public static let allowedKeys = ["writes", "timeout", "memory_mb", "instructions"]

    /// What a manifest may ask for; the host's ceilings (`RunLimits.hostCeiling`).
    public static let memoryMBRange: ClosedRange<Int64> = 1...Int64(RunLimits.hostCeiling.memoryBytes >> 20)
    public static let timeoutRange: ClosedRange<Double> = 0...RunLimits.hostCeiling.timeoutSeconds
    public static let instructionsRange: ClosedRange<Int64> = 1...1_000_000_000_000
    public static let writesRange: ClosedRange<Int64> = 0...1_000_000

    /// `base` with these limits applied.
    public func applied(to base: RunLimits) -> RunLimits {
        var l = base
        if let writes { l.writes = writes }
        if let timeoutSeconds { l.timeoutSeconds = timeoutSeconds }
        if let memoryMB { l.memoryBytes = memoryMB << 20 }   // in range: ManifestParser checks
        if let instructions { l.instructions = instructions }
        return l
    }
}

/// A declared parameter.
public struct ParamSpec: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        /// `table`: a JSON object (a trigger's `params.event`, a params file's object; `--param` takes JSON text).
        case string, number, integer, boolean, list, file, table
    }

    public var name: String
    public var kind: Kind
    public var required: Bool
    public var defaultValue: ScriptValue?
    public var description: String?

    public static let allowedKeys = ["type", "required", "default", "description"]
}

/// A manifest or parameter problem. The message names the file and line and says
/// how to fix it; the CLI exits with code 2.
public struct ManifestError: Error, Sendable, CustomStringConvertible, Equatable {
    public let message: String
    public init(_ message: String) { self.message = message }
    public var description: String { message }
}

extension RecipeManifest {
    /// Reads the manifest of `recipe` without running its body.
    public static func load(from recipe: RecipeFile) throws -> RecipeManifest {
        let located: ManifestLocator.Located
        do { located = try ManifestLocator.locate(in: recipe.source) } catch let f as ManifestLocator.Failure {
            throw ManifestError("\(recipe.displayPath):\(f.line): \(f.message)")
        }
        // Evaluate the table alone, as data: read directly when it is plain literals, else
        // in a small empty sandbox (the leading newlines keep line numbers right in messages).
        let value: ScriptValue
        do {
            if let literal = LiteralTable.parse(located.table) {
                value = literal
            } else {
                let chunk = String(repeating: "\n", count: located.line - 1) + "return " + located.table
                value = try LuaDataFile.makeVM().evaluate(source: chunk, chunkName: "@" + recipe.displayPath)
            }
        } catch let e as ScriptMessageError {
            throw ManifestError(e.message.contains(":\(located.line)") || e.message.hasPrefix(recipe.displayPath)
                ? "\(e.message)" : "\(recipe.displayPath):\(located.line): manifest: \(e.message)")
        }
        return try ManifestParser(where: "\(recipe.displayPath):\(located.line)").parse(value)
    }
}
