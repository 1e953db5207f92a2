import Foundation
import SystemText
import ScriptHost
import RunJournal

/// `hubscript plans list|show`: the saved plans the journal holds and their approvals.
enum PlansCommands {
    static let group = CommandGroup(
        name: "plans", abstract: "List and show saved plans with their approvals.",
        subcommands: [HubscriptCLI.entry(PlansListCommand.self), HubscriptCLI.entry(PlansShowCommand.self)])

    /// `approvals N/M` for the plan as recorded, under the rules in force now.
    static func required(_ common: CommonOptions.Values, _ record: PlanRecord) -> Int {
        max(record.required, PlanApprovals.requiredNow(common, record))
    }

    /// One line per decision about the plan (approvals, rejections, applies), oldest
    /// first; a decision about other content than `content` says so.
    static func decisionLines(_ p: PlanRecord, content: String) -> String {
        var text = ""
        for d in p.decisions {
            var line = "  \(RunsCommands.time(d.decidedAt))  \(d.kind.rawValue)  \(TerminalText.field(d.personName.map { "\(d.person) <\($0)>" } ?? d.person))"
            if d.contentSHA256 != content { line += "  (other content sha256:\(d.contentSHA256.prefix(12))…)" }
            if let reason = d.reason { line += "  reason: \(TerminalText.field(reason))" }
            if let code = d.exitCode { line += "  exit \(code)" }
            text += line + "\n"
        }
        return text
    }
}

struct PlansListCommand: Command {
    static let configuration = CommandConfiguration(
        name: "plans list", abstract: "List recorded plans, newest first.", usage: "[--limit N]",
        options: [OptionSpec(name: "limit", valueName: "n", help: "How many (default 20).")] + CommonOptions.specs,
        discussion: "Status: waiting, approved (enough approvals of its content), rejected or applied.")

    let common: CommonOptions.Values
    let limit: Int

    init(_ arguments: ParsedArguments) throws {
        common = try CommonOptions.Values(arguments)
        let text = arguments.value("limit") ?? "20"
        guard let limit = Int(text), limit > 0 else { throw UsageError("--limit must be a positive whole number, not '\(text)'") }
        self.limit = limit
    }

    func run() throws -> Int32 {
        let plans = try common.openJournal().plans(limit: limit)
        guard !plans.isEmpty else {
            Console.out("no plans recorded (hubscript plan RECIPE --out PLAN.json records one)\n")
            return ExitCode.success
        }
        var text = "PLAN  STATUS  APPROVALS  WRITES  MAKER  CREATED  RECIPE\n"
        for p in plans {
            let required = PlansCommands.required(common, p)
            text += [p.id, p.shownStatus(required: required), "\(p.approvals(for: p.contentSHA256).count)/\(required)",
                     "\(p.writes)", p.maker, RunsCommands.time(p.createdAt), DisplayPath.relative(URL(fileURLWithPath: p.recipePath))]
                .map(TerminalText.field).joined(separator: "  ") + "\n"
        }
        Console.out(text)
        return ExitCode.success
    }
}

struct PlansShowCommand: Command {
    static let configuration = CommandConfiguration(
        name: "plans show", abstract: "Show a recorded plan: its maker, approvals, rejection and applies.",
        usage: "PLAN_ID|PLAN.json", options: CommonOptions.specs)

    let plan: String
    let common: CommonOptions.Values

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.count == 1 else { throw UsageError("expected one plan id or PLAN.json") }
        plan = arguments.positionals[0]
        common = try CommonOptions.Values(arguments)
    }

    func run() throws -> Int32 {
        let journal = try common.openJournal()
        let id: String
        do { id = try PlanApprovals.named(plan, journal: journal).id } catch let error as PlanApprovalError {
            Console.err("hubscript plans show: \(TerminalText.text(error.message))\n")
            return ExitCode.usage
        }
        guard let p = try journal.plan(id) else {
            Console.err("hubscript plans show: the journal holds no plan \(TerminalText.field(id)) (hubscript plans list shows them)\n")
            return ExitCode.usage
        }
        let required = PlansCommands.required(common, p)
        var text = """
            plan \(TerminalText.field(p.id))
              status       \(p.shownStatus(required: required))
              approvals    \(p.approvals(for: p.contentSHA256).count) of \(required) required
              maker        \(TerminalText.field(p.maker)) (\(p.makerKind == .hub ? "Hub user" : "operating-system user"))
              file         \(TerminalText.field(p.path))
              recipe       \(TerminalText.field(p.recipePath))
              profile      \(TerminalText.field(p.profile))
              writes       \(p.writes)
              permissions  \(p.permissions.isEmpty ? "none" : p.permissions.joined(separator: ", "))
              content      sha256:\(p.contentSHA256)
              created      \(RunsCommands.time(p.createdAt))

            """
        text += PlansCommands.decisionLines(p, content: p.contentSHA256)
        Console.out(text)
        return ExitCode.success
    }
}
