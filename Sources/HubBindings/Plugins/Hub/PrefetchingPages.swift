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
final class PrefetchingPages: @unchecked Sendable {
    private var iterator: HubPageIterator
    private var pending: DispatchWorkItem?
    private var result: Result<[HubJSON]?, Error>?
    private var finished = false
    private let queue = DispatchQueue(label: "hubscript.hub-list-prefetch")

    init(_ iterator: HubPageIterator) {
        self.iterator = iterator
    }

    /// The next page, or nil after the last one.
    func next() throws -> [HubJSON]? {
        if finished { return nil }
        if pending == nil { start() }
        pending!.wait()
        pending = nil
        let page = try result!.get()
        if page == nil {
            finished = true
        } else {
            start()   // fetch the next page while this one is used
        }
        return page
    }

    private func start() {
        let item = DispatchWorkItem { [self] in
            result = Result { try iterator.nextPage() }
        }
        pending = item
        queue.async(execute: item)
    }

    deinit { pending?.wait() }
}
