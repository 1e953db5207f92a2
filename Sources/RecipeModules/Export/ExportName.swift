import Vault

/// The rules for export names: a plain file name inside the run's output folder, and a
/// data file — never a file hubscript itself reads.
///
/// Plain: non-empty, at most 200 bytes of UTF-8, no `/` or `\`, not starting with `.`
/// (so also not `.` or `..`, and never a hidden or partial file), only printable
/// characters: no control or format characters (which include the bidirectional
/// overrides that make `exe.txt` look like `txt.exe`) and no line or paragraph separators.
///
/// Data: the name ends in one of its format's extensions (`ExportFormat.extensions`,
/// compared without case): `.jsonl`/`.ndjson` for `export.jsonl`, `.csv` for
/// `export.csv`. A name without any `.` gets the format's first extension
/// (`report` → `report.jsonl`). So an export can never create `hubscript.config.lua`,
/// a `.lua` module, `hubscript.lock`, a plan or credentials file (`.json`), the journal or
/// the sandbox (`.sqlite`) — nor a `Makefile` or any other file another tool runs.
enum ExportName {
    static let maxBytes = 200
    /// The prefix of exports that go to the vault: `vault:audit/ada.jsonl` is stored as
    /// the vault object `audit/ada.jsonl`, whose name follows the vault's rules
    /// (`VaultName`: `/` allowed) and ends in one of the format's extensions.
    static let vaultPrefix = "vault:"

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
        if name.hasPrefix(vaultPrefix) {
            do { try VaultName.validate(String(name.dropFirst(vaultPrefix.count))) } catch let e as VaultError {
                throw ScriptMessageErrorFactory.argument(
                    1, function, "vault exports are named like 'vault:audit/\(example)': \(e.message)")
            }
            return
        }
        guard isValid(name) else {
            throw ScriptMessageErrorFactory.argument(
                1, function, "export names are plain file names like '\(example)', got \(SoftFailure.quoted(name))")
        }
    }

    /// The file name an export of `format` called `name` (already `isValid`) creates:
    /// `name` itself when it ends in one of the format's extensions, `name` plus the
    /// first extension when it has no `.` at all.
    /// - Throws: `bad argument #1 to 'export.jsonl' (export.jsonl writes only .jsonl or
    ///   .ndjson files, got 'hubscript.config.lua'; a name without an extension gets .jsonl)`.
    static func fileName(for name: String, format: ExportFormat, function: String) throws -> String {
        let extensions = format.extensions
        guard let dot = name.utf8.lastIndex(of: UInt8(ascii: ".")) else { return name + "." + extensions[0] }
        let given = String(name[name.utf8.index(after: dot)...]).lowercased()
        guard extensions.contains(given) else {
            let list = extensions.map { "." + $0 }.joined(separator: " or ")
            throw ScriptMessageErrorFactory.argument(1, function,
                "\(function) writes only \(list) files, got \(SoftFailure.quoted(name)); a name without an extension gets .\(extensions[0])")
        }
        return name
    }
}

extension ExportFormat {
    /// The extensions (lower case, without the dot) a file of this format may have; the
    /// first is added to a name that has none. `.json` is not one: it is what hubscript's
    /// own plans and credentials use. (`.tsv` is not one either: the file holds commas.)
    var extensions: [String] {
        switch self {
        case .jsonl: ["jsonl", "ndjson"]
        case .csv: ["csv"]
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
