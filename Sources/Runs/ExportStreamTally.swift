import Foundation
import ScriptHost

/// Counts what `export.jsonl(name, hub.…list…)` streamed straight from the Hub's pages
/// (the fast path, which never turns an item into a Lua table) and reports each such
/// list when it ends, as the `--json` event
/// `{"type":"export_streamed","items":N,"pages":P}`.
///
/// The event is how a run — and a test — can tell that the fast path ran: the row-by-row
/// path writes the same bytes, so the file alone cannot show it. Used from the run's
/// thread only.
final class ExportStreamTally: @unchecked Sendable {
    private let output: any ScriptOutput
    private var open: [Int: (items: Int, pages: Int)] = [:]

    init(output: any ScriptOutput) { self.output = output }

    /// Wraps a page source: counts each page of list `id`, reports the list at its end.
    func counting(_ pages: @escaping (Int) throws -> [Data]?) -> (Int) throws -> [Data]? {
        { [self] id in
            let page = try pages(id)
            record(list: id, page: page)
            return page
        }
    }

    private func record(list id: Int, page: [Data]?) {
        guard let page else {
            let seen = open.removeValue(forKey: id) ?? (0, 0)
            output.event("export_streamed", ["items": .integer(Int64(seen.items)), "pages": .integer(Int64(seen.pages))])
            return
        }
        open[id, default: (0, 0)].items += page.count
        open[id, default: (0, 0)].pages += 1
    }
}
