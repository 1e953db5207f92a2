import HubClient

/// One open `hub` list: what it reads, where it is (the cursor of its next page), and,
/// once the run's record of its pages ends, the live pages it goes on with.
final class OpenList {
    let path: String
    let query: [(name: String, value: String)]
    let feature: String?
    /// Items per page, as the Hub is asked.
    static let pageSize = 100
    /// The cursor of the next page (nil: the first page, or none after the last).
    private(set) var cursor: String?
    /// A page without a next cursor was read: the next call ends the list.
    private(set) var ended = false
    /// The live pages (nil while pages are replayed from the record).
    private(set) var live: PrefetchingPages?

    init(path: String, query: [(name: String, value: String)], feature: String?) {
        self.path = path
        self.query = query
        self.feature = feature
    }

    /// The query of the next page's request, as the client sends it.
    var pageQuery: [(name: String, value: String)] {
        var q = query
        q.append((name: "limit", value: String(Self.pageSize)))
        if let cursor { q.append((name: "cursor", value: cursor)) }
        return q
    }

    /// A page was read whose next page `next` names (nil: it was the last).
    func advance(to next: String?) {
        cursor = next
        if next == nil { ended = true }
    }

    /// Starts reading live from the next page.
    func goLive(_ client: HubClient) -> PrefetchingPages {
        let pages = PrefetchingPages(client.paginate(path: path, query: query, limit: Self.pageSize, feature: feature)
            .makeIterator(resumingAt: cursor))
        live = pages
        return pages
    }
}
