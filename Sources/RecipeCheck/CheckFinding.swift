/// One thing `hubscript check` found in a file, at a line and column.
public struct CheckFinding: Sendable, Equatable, CustomStringConvertible {
    public enum Severity: String, Sendable {
        /// The recipe would fail (or misbehave) when it runs: `check` exits 1.
        case error
        /// Worth a look, but the recipe runs: `check` still exits 0.
        case warning
    }

    /// The file as the person named it (or as `require` found it).
    public let file: String
    public let line: Int
    public let column: Int
    public let severity: Severity
    /// A stable code for scripts: `undeclared_global`, `global_write`, `unknown_field`,
    /// `permission_not_declared`, `unknown_param`, `unused_param`, `argument_count`,
    /// `unused_local`, `module_not_found`, `syntax`, `manifest`.
    public let code: String
    public let message: String

    public init(file: String, line: Int, column: Int, severity: Severity, code: String, message: String) {
        self.file = file
        self.line = line
        self.column = column
        self.severity = severity
        self.code = code
        self.message = message
    }

    /// `recipes/x.lua:12:5: error: undeclared global 'count' (…)`
    public var description: String { "\(file):\(line):\(column): \(severity.rawValue): \(message)" }
}
