/// The rule for export names: a plain file name inside the run's output folder.
///
/// Valid: non-empty, at most 200 bytes of UTF-8, no `/` or `\`, not starting with
/// `.` (so also not `.` or `..`, and never a hidden or partial file), only printable
/// characters: no control or format characters (which include the bidirectional
/// overrides that make `exe.txt` look like `txt.exe`) and no line or paragraph separators.
enum ExportName {
    static let maxBytes = 200

    static func isValid(_ name: String) -> Bool {
        guard !name.isEmpty, name.utf8.count <= maxBytes, !name.hasPrefix(".") else { return false }
        for scalar in name.unicodeScalars {
            if scalar == "/" || scalar == "\\" { return false }
            switch scalar.properties.generalCategory {
            case .control, .format, .lineSeparator, .paragraphSeparator, .unassigned, .surrogate, .privateUse:
                return false
            default: continue
            }
        }
        return true
    }

    /// Throws `bad argument #1 to 'export.jsonl' (export names are plain file names like 'events.jsonl', got '../x')`.
    static func validate(_ name: String, function: String, example: String) throws {
        guard isValid(name) else {
            throw ScriptMessageErrorFactory.argument(
                1, function, "export names are plain file names like '\(example)', got \(SoftFailure.quoted(name))")
        }
    }
}

import ScriptHost

/// Builds Lua-style argument errors for functions whose public name differs from
/// the raw binding that checks them.
enum ScriptMessageErrorFactory {
    static func argument(_ n: Int, _ function: String, _ detail: String) -> ScriptMessageError {
        ScriptMessageError("bad argument #\(n) to '\(function)' (\(detail))")
    }
}
