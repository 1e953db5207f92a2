import Foundation
import RunJournal

/// `hubscript runs repair [--accept-loss]`: checks that the journal lost no committed
/// history (as every command that opens it does) and, with `--accept-loss`, makes a
/// journal that lost some usable again (`Journal.acceptLoss`).
struct RunsRepairCommand: Command {
    static let configuration = CommandConfiguration(
        name: "runs repair", abstract: "Check the journal's history; accept a loss it reports.", usage: "[--accept-loss]",
        options: [
            OptionSpec(name: "accept-loss", valueName: nil,
                       help: "Accept that the journal lost committed history (its log deleted or damaged) and use it as it is."),
        ] + CommonOptions.specs,
        discussion: """
        Every command refuses a journal whose write-ahead log (journal.sqlite-wal) was
        deleted or damaged after commits it held: the runs, writes and fires in them are
        forgotten, and a forgotten run would be started afresh instead of resumed.
        Without --accept-loss this command only checks (exit 0 intact, 2 refused). With
        it, a copy of the log is kept (journal.sqlite-wal.lost-SECONDS) and the journal is
        used as it now is. A PostgreSQL journal has nothing to repair: the server makes
        each commit durable before it answers.
        """)

    let common: CommonOptions.Values
    let acceptLoss: Bool

    init(_ arguments: ParsedArguments) throws {
        guard arguments.positionals.isEmpty else { throw UsageError("runs repair takes no arguments") }
        common = try CommonOptions.Values(arguments)
        acceptLoss = arguments.flag("accept-loss")
    }

    func run() throws -> Int32 {
        let location = try common.journalLocation()
        guard case .sqlite(let path) = location else {
            Console.out("the journal \(location) is a PostgreSQL database: nothing to repair (the server makes each commit durable).\n")
            return ExitCode.success
        }
        do {
            _ = try Journal.openChecked(path: path, check: .always)
            Console.out("the journal \(path) is intact: it holds every commit recorded.\n")
            return ExitCode.success
        } catch let error as JournalError where error.code == .historyLost && acceptLoss {
            // Accepted below; anything else (a damaged file) is reported as it is.
        }
        let accepted = try Journal.acceptLoss(path: path)
        var text = "the journal \(path) is in use again as it now is (history mark \(accepted.held)"
        if let recorded = accepted.recorded, recorded > accepted.held {
            text += "; \(recorded) was recorded: what came after \(accepted.held) is lost"
        }
        text += ").\n"
        if let copy = accepted.logCopy { text += "A copy of its write-ahead log as it was: \(copy)\n" }
        Console.out(text)
        return ExitCode.success
    }
}
