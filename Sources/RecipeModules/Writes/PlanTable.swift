import JSONKit
import Foundation
import ScriptHost

/// The human form of a plan, for `hubscript plan` without `--out`.
///
/// ```
/// Plan run_20261130T142233Z_9f3a: recipes/offboard.lua, profile default
/// #  METHOD  TARGET                  CHANGE
/// 1  POST    /users/usr_ada/suspend  suspend usr_ada {"reason":"offboarded"}
/// 1 write planned, 3 reads; nothing was sent.
/// ```
/// A create's change ends its summary with the placeholder later rows use for its id:
/// `create user grace@example.com (invited) as usr_planned_1 {"email":…}`.
/// Columns are as wide as their widest cell, two spaces apart, without trailing spaces;
/// bodies are compact JSON cut to `bodyWidth` characters. Every cell and the header's
/// fields go through `TerminalText.field`: a recipe's `\r` or escape sequence in a
/// summary, path or key shows as `\r`/`\e`, so it cannot hide a row or redraw the table.
public enum PlanTable {
    public static let bodyWidth = 60

    public static func render(_ plan: Plan) -> String {
        let f = TerminalText.field
        var lines = ["Plan \(f(plan.runID)): \(f(plan.recipeDisplayPath)), profile \(f(plan.profile))"]
        let reads = "\(plan.counts.reads) \(plan.counts.reads == 1 ? "read" : "reads")"
        guard !plan.writes.isEmpty else {
            return (lines + ["No writes planned (\(reads)); nothing was sent."]).joined(separator: "\n") + "\n"
        }
        let rows = [["#", "METHOD", "TARGET", "CHANGE"]] + plan.writes.map { w in
            let summary = f(w.summary) + (w.creates.map { " as \(f($0.placeholder))" } ?? "")
            return [String(w.sequence), f(w.method), f(w.path),
                    w.body.map { "\(summary) \(CompactJSON.text(ScriptValue($0), max: bodyWidth))" } ?? summary]
        }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for row in rows {
            var line = ""
            for (column, cell) in row.enumerated() {
                line += column < 3 ? cell.padding(toLength: widths[column] + 2, withPad: " ", startingAt: 0) : cell
            }
            lines.append(line.trimmingTrailingSpaces())
        }
        let n = plan.writes.count
        lines.append("\(n) \(n == 1 ? "write" : "writes") planned, \(reads); nothing was sent.")
        return lines.joined(separator: "\n") + "\n"
    }
}

extension String {
    fileprivate func trimmingTrailingSpaces() -> String {
        var s = self
        while s.hasSuffix(" ") { s.removeLast() }
        return s
    }
}
