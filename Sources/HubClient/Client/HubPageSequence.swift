import Foundation
import HTTPKit

/// Every item of a cursor-paginated list, fetched a page at a time as iteration
/// reaches it. Nothing is fetched until the first item is asked for; iteration stops
/// when `page.has_more` is false (or no `next_cursor` comes back).
///
/// `Sequence.next()` cannot throw, so the plain `for item in sequence` loop ends early
/// on an error and leaves it in the iterator's `error`; callers that must see errors
/// use `HubPageIterator.nextItem()` or `allItems()`.
public struct HubPageSequence: Sequence, Sendable {
    let client: HubClient
    public let path: String
    public let query: [(name: String, value: String)]
    /// Items per page (the Hub clamps to 100).
    public let limit: Int
    public let feature: String?

    public func makeIterator() -> HubPageIterator {
        HubPageIterator(sequence: self)
    }

    /// An iterator whose first page is the one `cursor` names (a `next_cursor` an
    /// earlier walk of the same list returned); nil: the list's first page.
    public func makeIterator(resumingAt cursor: String?) -> HubPageIterator {
        var iterator = HubPageIterator(sequence: self)
        iterator.resume(at: cursor)
        return iterator
    }

    /// Fetches every page and returns all items, or throws the first error.
    public func allItems() throws -> [HubJSON] {
        var iterator = makeIterator()
        var items: [HubJSON] = []
        while let item = try iterator.nextItem() { items.append(item) }
        return items
    }
}

/// Walks a `HubPageSequence`.
public struct HubPageIterator: IteratorProtocol {
    let sequence: HubPageSequence
    private var buffer: [HubJSON] = []
    private var index = 0
    private var cursor: String?
    private var finished = false
    /// The error that ended a plain `next()` iteration, if any.
    public private(set) var error: HubError?
    /// How many pages were fetched so far.
    public private(set) var pagesFetched = 0

    init(sequence: HubPageSequence) {
        self.sequence = sequence
    }

    mutating func resume(at cursor: String?) { self.cursor = cursor }

    /// The cursor of the page the next `nextPage` fetches; nil when the list has no more
    /// pages (or before the first page).
    public var nextCursor: String? { finished ? nil : cursor }

    /// The next item, fetching the next page when the current one is used up; nil at the end.
    public mutating func nextItem() throws -> HubJSON? {
        while index >= buffer.count {
            guard let page = try nextPage() else { return nil }
            buffer = page
            index = 0
        }
        defer { index += 1 }
        return buffer[index]
    }

    /// The items of the next page, or nil when there are no more pages.
    public mutating func nextPage() throws -> [HubJSON]? {
        try nextPage(canonical: false)?.decodedItems()
    }

    /// The next page, its items decoded or (`canonical`) each as canonical JSON bytes
    /// read straight from the response; nil when there are no more pages.
    public mutating func nextPage(canonical: Bool) throws -> HubListPage? {
        guard !finished else { return nil }
        var query = sequence.query
        query.append((name: "limit", value: String(sequence.limit)))
        if let cursor { query.append((name: "cursor", value: cursor)) }
        var request = HubRequest(.get, sequence.path, query: query, feature: sequence.feature)
        request.decodesBody = !canonical
        let response = try sequence.client.send(request)
        let items: HubListPage?
        let page: HubJSON?
        if canonical {
            let scanned: HubJSONCanonical.Page?
            do { scanned = try HubJSONCanonical.page(response.body) } catch {
                finished = true
                throw HubClient.invalidBody(HTTPResponseMessage(status: response.status, headers: response.headers,
                                                                body: response.body), requestID: response.requestID)
            }
            items = scanned.map { .canonical($0.items) }
            page = scanned?.page
        } else {
            items = response.json["data"]?.arrayValue.map { .decoded($0) }
            page = response.json["page"]
        }
        guard let items else {
            finished = true
            throw HubError(code: HubError.Code.invalidResponse, message: "\(sequence.path) did not answer a list ({data, page})",
                           status: response.status, requestID: response.requestID)
        }
        pagesFetched += 1
        cursor = page?["next_cursor"]?.stringValue
        if page?["has_more"]?.boolValue != true || cursor == nil { finished = true }
        return items
    }

    public mutating func next() -> HubJSON? {
        do {
            return try nextItem()
        } catch {
            finished = true
            buffer = []
            self.error = (error as? HubError)
                ?? HubError(code: HubError.Code.invalidResponse, message: String(describing: error))
            return nil
        }
    }
}

/// One page of a list, in the form its reader asked for.
public enum HubListPage: Sendable {
    /// Items parsed into values (a recipe iterating in Lua).
    case decoded([HubJSON])
    /// Items as canonical JSON bytes, exactly `item.encoded()` (an export writing JSONL).
    case canonical([Data])

    public var count: Int {
        switch self {
        case .decoded(let items): items.count
        case .canonical(let items): items.count
        }
    }

    /// The items as values (parsing canonical bytes when needed).
    public func decodedItems() throws -> [HubJSON] {
        switch self {
        case .decoded(let items): items
        case .canonical(let items): try items.map { try HubJSON.parse($0) }
        }
    }

    /// The items as canonical JSON bytes (encoding values when needed).
    public func canonicalItems() -> [Data] {
        switch self {
        case .decoded(let items): items.map { $0.encoded() }
        case .canonical(let items): items
        }
    }
}
