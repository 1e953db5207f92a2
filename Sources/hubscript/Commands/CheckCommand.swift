import Foundation
import ScriptHost

/// `hubscript check FILE…`: syntax, manifest and a static analysis of each file (and
/// of the modules it requires), without running any.
struct CheckCommand: Command {
    static let configuration = CommandConfiguration(
        name: "check",
        abstract: "Check recipes without running them: syntax, manifest, names, calls, permissions.",
        usage: "FILE|LIB:RECIPE… [--lib DIR]… [--json] | --config [FILE] [--json]",
        options: [OptionSpec(name: "json", valueName: nil, help: "JSON objects on stdout: a \"finding\" each, a \"check\" a file, a summary."),
                  OptionSpec(name: "lib", valueName: "dir", help: "Add a folder that require() may load modules from (as run does).", repeatable: true)]
            + ConfigCheckRun.checkOptions,
        discussion: """
        Prints one line per file, and under it each finding as FILE:LINE:COLUMN: error|warning:
        MESSAGE. Errors: an undeclared global read or written, an unknown module field
        (hub.users.lst), a call whose permission needs does not declare, params.x not in
        the manifest, a wrong argument count. Warnings: a declared parameter never read,
        an unused local. Modules the recipe requires are checked too. Exits 0 if no file
        has an error (warnings are printed), 2 if a manifest's needs names an unknown
        permission, 1 if any file fails otherwise.

        With --config, checks the configuration's jobs and triggers instead, as
        'hubscript jobs check' does (see its --help).
        """)

    /// Each file as written (a path, or `LIB:RECIPE`) and the path it names.
    let paths: [(written: String, path: String)]
    let json: Bool
    /// The static analysis of the files (nil with `--config`).
    let analysis: StaticCheck?
    /// `--config`: the configuration's jobs and triggers are checked instead (`jobs check`).
    var configCheck: ConfigCheckRun?

    init(_ arguments: ParsedArguments) throws {
        if let check = try ConfigCheckRun(checkArguments: arguments) {
            configCheck = check
            paths = []
            json = check.json
            analysis = nil
            return
        }
        guard !arguments.positionals.isEmpty else { throw UsageError("missing the recipe FILE(s) to check") }
        json = arguments.flag("json")
        let libraries = CheckLibraries(arguments)
        paths = try arguments.positionals.map { ($0, try libraries.resolve($0)) }
        analysis = try StaticCheck.make(libraryFolders: arguments.all("lib").map { URL(fileURLWithPath: $0) },
                                        libraries: { libraries.modules() })
    }

    func run() throws -> Int32 {
        if let configCheck { return try configCheck.run() }
        guard let analysis else { return ExitCode.usage }
        if json { return runJSON(analysis) }
        var failures = 0
        var unknownPermissions = false
        for (written, path) in paths {
            // The problem quotes the recipe (syntax errors, manifest values): escaped, its
            // lines indented under the file's, so it cannot pass for another file's line.
            let shownPath = TerminalText.field(written)
            let report = analysis.check(path: path)
            var lines = report.problem.map { [$0] } ?? []
            lines += report.findings.map(\.description)
            let shown = lines.map { "\n     " + TerminalText.text($0).replacingOccurrences(of: "\n", with: "\n     ") }.joined()
            if report.failed {
                failures += 1
                unknownPermissions = unknownPermissions || report.isUnknownPermission
                Console.out("\(Styled.fail) \(shownPath)\(shown)\n")
            } else {
                Console.out("\(Styled.ok) \(shownPath)\(shown)\n")
            }
        }
        if paths.count > 1 {
            Console.out("\(paths.count - failures) passed, \(failures) failed\n")
        }
        if unknownPermissions { return ExitCode.usage }
        return failures == 0 ? ExitCode.success : ExitCode.recipeFailed
    }

    /// `--json`: a `finding` event per finding (`file`, `line`, `column`, `severity`,
    /// `code`, `message`), a `check` event per file (`file`, `ok`, `problem` when the
    /// syntax or manifest is wrong, `errors`, `warnings`), then a `summary` with
    /// `passed`, `failed` and `exit_code`.
    func runJSON(_ analysis: StaticCheck) -> Int32 {
        let output = ConsoleOutput(json: true, timestamps: true)
        var failures = 0
        var unknownPermissions = false
        for (written, path) in paths {
            let report = analysis.check(path: path)
            if report.failed {
                failures += 1
                unknownPermissions = unknownPermissions || report.isUnknownPermission
            }
            for finding in report.findings {
                output.event("finding", ["file": .string(finding.file), "line": .integer(Int64(finding.line)),
                                         "column": .integer(Int64(finding.column)), "severity": .string(finding.severity.rawValue),
                                         "code": .string(finding.code), "message": .string(finding.message)])
            }
            output.event("check", ["file": .string(written), "ok": .bool(!report.failed), "problem": report.problem.map { .string($0) } ?? .null,
                                   "errors": .integer(Int64(report.errors)), "warnings": .integer(Int64(report.warnings))])
        }
        let code = unknownPermissions ? ExitCode.usage : failures == 0 ? ExitCode.success : ExitCode.recipeFailed
        var summary = JSONEvents.summary(status: failures == 0 ? "ok" : "failed", exitCode: code, runID: nil)
        summary["passed"] = .integer(Int64(paths.count - failures))
        summary["failed_files"] = .integer(Int64(failures))
        output.event("summary", summary)
        return code
    }
}
