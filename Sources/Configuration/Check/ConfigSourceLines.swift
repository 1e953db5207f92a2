import Foundation

/// Finds where in the configuration file's text a job, a trigger or one of their fields
/// is written, so a problem can say `FILE:LINE`. The file is Lua evaluated as data, so
/// this reads its text the way a person does: the section's `jobs =` line, then the
/// entry's `name =` or `["name"] =` after it, then the field's `key =` inside the
/// entry (up to the next entry of the section). A configuration built by code (loops,
/// concatenated names) may not be found: the line is then nil, never a wrong guess
/// outside the entry.
struct ConfigSourceLines: Sendable {
    let lines: [String]

    init(_ source: String) {
        lines = source.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
    }

    /// The line of `name = …` (a top-level key such as `jobs`), 1-based.
    func section(_ name: String) -> Int? {
        first(key: name, in: 0..<lines.count).map { $0 + 1 }
    }

    /// The line of entry `name` of `section` (1-based).
    func entry(_ name: String, in section: String) -> Int? {
        entryIndex(name, in: section).map { $0 + 1 }
    }

    /// The line of `field` in entry `name` of `section`; inside `within` (a table field
    /// such as `params`) when given. Falls back to nil when not written there.
    func field(_ field: String, of name: String, in section: String, within: String? = nil) -> Int? {
        guard let start = entryIndex(name, in: section) else { return nil }
        let end = entryEnd(after: start, section: section)
        var from = start
        if let within {
            guard let table = first(key: within, in: start..<end) else { return nil }
            from = table
        }
        return first(key: field, in: from..<end).map { $0 + 1 }
    }

    // MARK: -

    private func entryIndex(_ name: String, in section: String) -> Int? {
        guard let top = first(key: section, in: 0..<lines.count) else { return nil }
        return first(key: name, in: top..<lines.count, skippingFirstMatchOf: section)
    }

    /// Where the entry that starts at `start` ends: the next line that starts another
    /// entry (a key at the entry's own indentation), else the end of the file.
    private func entryEnd(after start: Int, section: String) -> Int {
        let indentation = lines[start].prefix { $0 == " " || $0 == "\t" }.count
        var k = start + 1
        while k < lines.count {
            let line = lines[k]
            let indent = line.prefix { $0 == " " || $0 == "\t" }.count
            if indent <= indentation, Self.startsWithKey(line) { return k }
            k += 1
        }
        return lines.count
    }

    /// The first line in `range` where `key` is assigned (`key =`, `["key"] =`,
    /// `['key'] =`), not counting `==`. Comments after `--` are ignored.
    private func first(key: String, in range: Range<Int>, skippingFirstMatchOf section: String? = nil) -> Int? {
        let escaped = NSRegularExpression.escapedPattern(for: key)
        let pattern = #"(^|[\s{,;])(\[\s*"\#(escaped)"\s*\]|\[\s*'\#(escaped)'\s*\]|\#(escaped))\s*=(?!=)"#
        for k in range {
            var line = lines[k]
            if let comment = line.range(of: "--") { line = String(line[..<comment.lowerBound]) }
            if key == section, k == range.lowerBound { continue }
            if section != nil, k == range.lowerBound {
                // The section's own line may hold the first entry after `jobs = {`.
                if let brace = line.firstIndex(of: "{") { line = String(line[line.index(after: brace)...]) } else { continue }
            }
            if line.range(of: pattern, options: .regularExpression) != nil { return k }
        }
        return nil
    }

    private static func startsWithKey(_ line: String) -> Bool {
        line.range(of: #"^\s*(\[\s*["'][^"']*["']\s*\]|[A-Za-z_][A-Za-z0-9_]*)\s*=(?!=)"#, options: .regularExpression) != nil
    }
}
