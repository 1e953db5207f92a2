import JSONKit
import Foundation
import ScriptHost
import SystemText

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
///
/// `coloured`: the title, column names and closing line in bold, and each METHOD by
/// what it does (`TerminalStyle.role(ofMethod:)`: POST green, PUT/PATCH yellow, DELETE
/// red); the columns line up as without colour.
public enum PlanTable {
    public static let bodyWidth = 60

    public static func render(_ plan: Plan, coloured: Bool = false) -> String {
        let f = TerminalText.field
        func paint(_ text: String, _ role: TerminalStyle.Role?) -> String {
            guard coloured, let role, !text.isEmpty else { return text }
            return role.start + text + TerminalStyle.reset
        }
        var lines = [paint("Plan \(f(plan.runID)): \(f(plan.recipeDisplayPath)), profile \(f(plan.profile))", .heading)]
        let reads = "\(plan.counts.reads) \(plan.counts.reads == 1 ? "read" : "reads")"
        guard !plan.writes.isEmpty else {
            return (lines + [paint("No writes planned (\(reads)); nothing was sent.", .heading)]).joined(separator: "\n") + "\n"
        }
        let rows = [["#", "METHOD", "TARGET", "CHANGE"]] + plan.writes.map { w in
            let summary = f(w.summary) + (w.creates.map { " as \(f($0.placeholder))" } ?? "")
            return [String(w.sequence), f(w.method), f(w.path),
                    w.body.map { "\(summary) \(CompactJSON.text(ScriptValue($0), max: bodyWidth))" } ?? summary]
        }
        let widths = (0..<3).map { column in rows.map { $0[column].count }.max() ?? 0 }
        for (index, row) in rows.enumerated() {
            var line = ""
            for (column, cell) in row.enumerated() {
                let padded = column < 3 ? cell.padding(toLength: widths[column] + 2, withPad: " ", startingAt: 0) : cell
                let role = index == 0 ? .heading : column == 1 ? TerminalStyle.role(ofMethod: cell) : nil
                let trimmed = padded.trimmingTrailingSpaces()
                line += paint(trimmed, role) + String(repeating: " ", count: padded.count - trimmed.count)
            }
            lines.append(line.trimmingTrailingSpaces())
        }
        let n = plan.writes.count
        lines.append(paint("\(n) \(n == 1 ? "write" : "writes") planned, \(reads); nothing was sent.", .heading))
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
