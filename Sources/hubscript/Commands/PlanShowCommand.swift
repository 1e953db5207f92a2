import Foundation
import SystemText
import ScriptHost
import RecipeModules
import RunJournal

/// `hubscript plan …`: `plan show PLAN.json` shows a saved plan; anything else plans a
/// recipe (`PlanCommand`). Only the bare word `show` is the subcommand: a recipe named
/// show is planned as `hubscript plan ./show` or `hubscript plan show.lua`.
enum PlanCommands {
    static var entry: HubscriptCLI.Entry {
        HubscriptCLI.Entry(configuration: PlanCommand.configuration, main: { main($0) })
    }

    static func main(_ args: [String]) -> Int32 {
        if args.first == "show" { return PlanShowCommand.main(Array(args.dropFirst())) }
        return PlanCommand.main(args)
    }
}

/// `hubscript plan show PLAN.json [--json]`: a saved plan as `plan` printed it, with
/// what it was made from (recipe, params, profile, content hash) and, when the journal
/// holds it, its maker, status and decisions. Reads only: nothing is sent or recorded.
struct PlanShowCommand: Command {
    static let configuration = CommandConfiguration(
        name: "plan show",
        abstract: "Show a saved plan: its writes, recipe, params, maker, content hash and approvals.",
        usage: "PLAN.json [--json]",
        options: [OptionSpec(name: "json", valueName: nil, help: "One JSON object (type \"plan\") on stdout.")]
            + CommonOptions.specs,
        discussion: """
        The writes are the table 'hubscript plan' prints. Maker, status and approvals come from the
        journal, which records a plan when 'hubscript plan --out' saves it.
        To plan a recipe file named show, write 'hubscript plan ./show' (or show.lua).
        """)

    let file: String
    let json: Bool
    let common: CommonOptions.Values

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else {
            var message = "expected one PLAN.json"
            if arguments.positionals.isEmpty, FileManager.default.fileExists(atPath: "show") {
                message += " (to plan the recipe file 'show' here, write hubscript plan ./show)"
            }
            throw UsageError(message)
        }
        file = arguments.positionals[0]
        json = arguments.flag("json")
        common = try CommonOptions.Values(arguments)
    }

    func run() throws -> Int32 {
        let plan: Plan
        let sha: String
        do {
            plan = try Plan.load(from: URL(fileURLWithPath: file))
            sha = try plan.contentSHA256()
        } catch {
            return JSONEvents.refuse("\(error)", json: json)
        }
        // The file is shown even when the journal cannot be read (it only adds the record).
        var record: PlanRecord?
        var journalProblem: String?
        do { record = try common.openJournal().plan(plan.runID) } catch { journalProblem = "\(error)" }
        if json {
            var fields = jsonFields(plan, sha: sha, record: record)
            if let journalProblem { fields["journal_error"] = .string(journalProblem) }
            ConsoleOutput(json: true, timestamps: true).event("plan", fields)
            return ExitCode.success
        }
        Console.out(text(plan, sha: sha, record: record, journalProblem: journalProblem))
        return ExitCode.success
    }

    func text(_ plan: Plan, sha: String, record: PlanRecord?, journalProblem: String? = nil) -> String {
        let f = TerminalText.field
        let params = (try? JSONCodec.encode(plan.params)) ?? "{}"
        var text = """
            plan \(f(plan.runID)) in \(f(file))
              recipe       \(f(plan.recipeDisplayPath)) (sha256:\(plan.recipeSHA256.prefix(12))…)
              profile      \(f(plan.profile))
              params       \(f(params))
              created      \(RunsCommands.time(plan.createdAt))
              content      sha256:\(sha)

            """
        if let record {
            let required = PlansCommands.required(common, record)
            text += "  maker        \(f(record.maker)) (\(record.makerKind == .hub ? "Hub user" : "operating-system user"))\n"
            text += "  status       \(record.shownStatus(required: required))\n"
            text += "  approvals    \(record.approvals(for: sha).count) of \(required) required\n"
            if record.contentSHA256 != sha {
                text += "  changed      the file was changed after it was saved (recorded sha256:\(record.contentSHA256.prefix(12))…)"
                    + (required > 0 ? "; apply needs \(required) approval\(required == 1 ? "" : "s") of the content as it is now\n" : "\n")
            }
            text += PlansCommands.decisionLines(record, content: sha)
        } else if let journalProblem {
            text += "  maker        unknown: the journal could not be read (\(TerminalText.line(journalProblem)))\n"
        } else {
            text += "  maker        not recorded (the journal holds no plan \(f(plan.runID)))\n"
        }
        return text + "\n" + PlanTable.render(plan, coloured: TerminalStyle.isColoured(.stdout))
    }

    func jsonFields(_ plan: Plan, sha: String, record: PlanRecord?) -> [String: ScriptValue] {
        var fields: [String: ScriptValue] = [
            "file": .string(file), "content_sha256": .string(sha), "plan": plan.jsonValue(), "record": .null,
        ]
        if let record {
            let required = PlansCommands.required(common, record)
            fields["record"] = [
                "maker": .string(record.maker), "maker_kind": .string(record.makerKind == .hub ? "hub" : "os"),
                "status": .string(record.shownStatus(required: required)),
                "approvals": .integer(Int64(record.approvals(for: sha).count)), "required": .integer(Int64(required)),
                "recorded_content_sha256": .string(record.contentSHA256),
                "decisions": .array(record.decisions.map { d in
                    [
                        "kind": .string(d.kind.rawValue), "person": .string(d.person),
                        "person_name": d.personName.map(ScriptValue.string) ?? .null,
                        "content_sha256": .string(d.contentSHA256), "reason": d.reason.map(ScriptValue.string) ?? .null,
                        "exit_code": d.exitCode.map { .integer(Int64($0)) } ?? .null,
                        "decided_at": .string(UTCTime.iso8601(d.decidedAt)),
                    ]
                }),
            ]
        }
        return fields
    }
}
