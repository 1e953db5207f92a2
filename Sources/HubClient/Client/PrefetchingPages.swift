import Dispatch
import Foundation

/// The pages of one lazy `hub` list, fetched one page ahead: while the recipe works
/// through page N, page N+1 is already on its way, so a long list (an audit export)
/// costs about the larger of the Hub's time and the recipe's, not their sum.
///
/// Contract: `next()` returns the pages in order, then nil; an error of a fetch is
/// thrown by the `next()` that would have returned its page. At most one fetch is in
/// flight, so the underlying iterator is only ever used by one thread at a time. A
/// list abandoned early has fetched at most one page more than it used.
public final class PrefetchingPages: @unchecked Sendable {
    private var iterator: HubPageIterator
    private var pending: DispatchWorkItem?
    private var result: Result<(page: HubListPage, next: String?)?, Error>?
    /// The cursor of the page after the one `next` returned last (nil: it was the last
    /// page): where a new walk of the list would go on from.
    public private(set) var cursorAfterLastPage: String?
    /// The form the last `next` asked for; the prefetch of the following page uses it.
    private var canonical = false
    private var finished = false
    private let queue = DispatchQueue(label: "hubscript.hub-list-prefetch")

    public init(_ iterator: HubPageIterator) {
        self.iterator = iterator
    }

    /// The next page, or nil after the last one: decoded items, or (`canonical`) each
    /// item's canonical JSON bytes. A page prefetched in the other form is converted.
    public func next(canonical: Bool) throws -> HubListPage? {
        if finished { return nil }
        self.canonical = canonical
        if pending == nil { start() }
        pending!.wait()
        pending = nil
        guard let (page, next) = try result!.get() else {
            finished = true
            cursorAfterLastPage = nil
            return nil
        }
        cursorAfterLastPage = next
        start()   // fetch the next page while this one is used
        switch (page, canonical) {
        case (.decoded, true): return .canonical(page.canonicalItems())
        case (.canonical, false): return .decoded(try page.decodedItems())
        default: return page
        }
    }

    /// The work item holds the list weakly: `pending` holds the item, so a strong
    /// capture would keep an abandoned list (and its pages) alive for the whole run.
    private func start() {
        let item = DispatchWorkItem { [weak self, canonical] in
            guard let self else { return }
            self.result = Result {
                guard let page = try self.iterator.nextPage(canonical: canonical) else { return nil }
                return (page, self.iterator.nextCursor)
            }
        }
        pending = item
        queue.async(execute: item)
    }

    /// Waits for a fetch in flight and drops every page held (the list was let go).
    public func close() {
        pending?.wait()
        pending = nil
        result = nil
        finished = true
    }

    deinit { pending?.wait() }
}
