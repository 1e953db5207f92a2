import Foundation
import HubClient
import JSONKit
import ScriptHost
import Secrets

/// What the `hub` module of one run works with: the client, the write coordinator
/// (every write goes through it: keys, journal, plan/apply, write limit), the open
/// list iterators and the read count. One per run, used from the run's thread.
public final class HubRunContext: @unchecked Sendable {
    public let client: HubClient
    public let writes: WriteCoordinator
    /// Where bindings put secrets the Hub returns once (a new API key's): the run's
    /// vault. nil: such a binding refuses to run (`vault_not_open`) before sending.
    public var secretStore: (any SecretStore)?
    /// Open lists by handle (see `maxOpenLists`).
    private(set) var lists: [Int: OpenList] = [:]
    private var listProgress: [Int: ProgressState] = [:]
    private var listBindings: [Int: String] = [:]
    /// Shows how many items each lazy list has fetched (a bar per list, total unknown).
    public var progress: (any ProgressReporter)?
    private var nextList = 1
    /// Lists closed to make room (see `maxOpenLists`): reading one again is an error,
    /// not a silent end.
    private var evictedLists: Set<Int> = []
    /// Open lists hold up to two pages each on the Swift side; a recipe that leaves
    /// lists unfinished (a `break`) would otherwise grow memory without bound. Past this
    /// many, opening a list closes the oldest open one.
    public static let maxOpenLists = 32
    /// GET requests made by bindings (pages count once each), sent to the Hub.
    public private(set) var reads = 0
    /// Reads answered from the run's record (`RecordedReads`) instead of the Hub.
    public var readsReplayed: Int { recorded.replayedCount }
    /// The run's record of its reads (replayed on a resume; see `RecordedReads`).
    public var recorded: RecordedReads
    /// Called after every write (sent, replayed or planned), e.g. for `--json` events.
    public var onWrite: ((_ intent: WriteIntent, _ result: WriteResult) -> Void)?
    /// Called when a write failed (the Hub refused it, or no answer came); not for a
    /// write that a limit or the plan stopped before it was sent.
    public var onWriteFailed: ((_ intent: WriteIntent, _ error: any Error) -> Void)?
    /// Called as each read starts (`reads` changed), e.g. to note the run's progress in
    /// the journal. (A write needs none: the journal records each send.)
    public var onRead: (() -> Void)?

    public init(client: HubClient, writes: WriteCoordinator, recorded: RecordedReads? = nil) {
        self.client = client
        self.writes = writes
        self.recorded = recorded ?? RecordedReads.disabled(runID: writes.runID)
        writes.pendingReads = { [weak self] in self?.recorded.takePending() ?? [] }
    }

    // MARK: Reads

    /// A GET of `path`, replayed from the run's record when it holds the answer.
    /// `feature` is the calling binding's flag (`HubFeatures`), put on the request so a
    /// `501` turns the feature off for the run; nil for an ungated binding.
    func get(_ path: String, _ query: [(name: String, value: String)] = [], feature: String?) throws -> ScriptValue {
        try checkFeature(feature)
        let key = recorded.key(method: "GET", path: path, query: query)
        switch try recorded.replayed(key, method: "GET", path: path) {
        case .body(let json)?: return ScriptValue(json)
        case .error(let error)?: throw error
        case .page?: recorded.mismatched()
        case nil: break
        }
        try writes.commitOutcomes()
        reads += 1
        onRead?()
        let json: HubJSON
        do { json = try client.send(HubRequest(.get, path, query: query, feature: feature)).json } catch let error as HubError {
            if RecordedAnswer.isRecordable(error) { try recorded.record(key: key, method: "GET", path: path, .error(error), masking: writes.masking.processWide) }
            throw error
        }
        try recorded.record(key: key, method: "GET", path: path, .body(json), masking: writes.masking.processWide)
        return ScriptValue(json)
    }

    /// Throws `feature_disabled` (nothing sent, no read counted) when the calling
    /// binding's feature is off; the binding then returns its "unavailable" result.
    private func checkFeature(_ feature: String?) throws {
        guard let feature, !client.isFeatureEnabled(feature) else { return }
        throw HubError(code: HubError.Code.featureDisabled, message: "The feature '\(feature)' is not available on this Hub")
    }

    /// Opens a lazy list for the binding `name` (`hub.users.list`); returns its handle
    /// (an empty list's when the binding's feature is off). `feature`: as for `get`; the
    /// list keeps it for each page it reads.
    func openList(_ name: String, _ path: String, _ query: [(name: String, value: String)], feature: String?) -> Int {
        if let feature, !client.isFeatureEnabled(feature) { return emptyList() }
        if lists.count >= Self.maxOpenLists, let oldest = lists.keys.min() {
            closeList(oldest)
            evictedLists.insert(oldest)
        }
        let id = nextList
        nextList += 1
        listBindings[id] = name
        lists[id] = OpenList(path: path, query: query, feature: feature)
        if let progress {
            // Ids far above the progress module's own (1, 2, …).
            let bar = ProgressState(id: TerminalProgressReporter.listBarIDs + id, label: "reading \(Self.resource(of: name))",
                                    total: nil)
            listProgress[id] = bar
            progress.started(bar)
        }
        return id
    }

    /// What a list binding reads, for people: `hub.users.list` → `users`,
    /// `hub.organizations.members` → `organization members`.
    static func resource(of binding: String) -> String {
        let parts = binding.split(separator: ".").map(String.init).filter { $0 != "hub" }
        guard let group = parts.first else { return binding }
        let words: [String: String] = ["api_keys": "API keys", "audit": "audit events"]
        let plural = words[group] ?? group.replacingOccurrences(of: "_", with: " ")
        switch parts.dropFirst().first {
        case nil, "list", "query", "for_user": return plural
        case let action?:
            let singular = plural.hasSuffix("s") ? String(plural.dropLast()) : plural
            return "\(singular) \(action.replacingOccurrences(of: "_", with: " "))"
        }
    }

    /// A handle whose list is empty (a gated list binding whose feature is off).
    func emptyList() -> Int {
        let id = nextList
        nextList += 1
        return id
    }

    /// The next page of list `id` as an array, or nil at the end (the list is closed).
    func nextPage(_ id: Int) throws -> ScriptValue {
        guard let page = try nextItems(id, canonical: false) else { return .nilValue }
        return .array(try page.decodedItems().map(ScriptValue.init))
    }

    /// The next page of list `id` with each item as canonical JSON (export's fast path).
    package func nextEncodedPage(_ id: Int) throws -> [Data]? {
        try nextItems(id, canonical: true)?.canonicalItems()
    }

    /// Frees list `id` (its pages, its progress bar): at its end, when the recipe lets
    /// it go (the Lua object's `__gc`/`__close`), or to make room for a new one.
    func closeList(_ id: Int) {
        lists.removeValue(forKey: id)?.live?.close()
        listBindings[id] = nil
        if var bar = listProgress.removeValue(forKey: id) {
            bar.isDone = true
            progress?.finished(bar)
        }
    }

    /// The next page of list `id`, or nil at the end (the list is then closed). A page
    /// the run's record holds is replayed from it (`RecordedReads`); once the record ends,
    /// the list goes on live from the cursor of the last page it replayed.
    private func nextItems(_ id: Int, canonical: Bool) throws -> HubListPage? {
        guard let list = lists[id] else {
            if evictedLists.contains(id) {
                throw ScriptMessageError("this hub list was closed: more than \(Self.maxOpenLists) lists were open at once; finish a list (or let go of it) before opening many more")
            }
            return nil
        }
        if list.ended {
            if list.live != nil {
                // Found live, as a list's end always was: it counts as a read (nothing is sent).
                try writes.commitOutcomes()
                reads += 1
                onRead?()
            }
            closeList(id)
            return nil
        }
        let key = recorded.key(method: "GET", path: list.path, query: list.pageQuery)
        if list.live == nil, let answer = try recorded.replayed(key, method: "GET", path: list.path) {
            if case .page(let items, let next) = answer {
                list.advance(to: next)
                let page: HubListPage = canonical ? .canonical(items) : .decoded(try items.map { try HubJSON.parse($0) })
                advanceBar(id, by: page.count)
                return page
            }
            recorded.mismatched()   // not a page: this read and every later one are live
        }
        try writes.commitOutcomes()
        reads += 1
        onRead?()
        let pages = list.live ?? list.goLive(client)
        let page: HubListPage?
        do { page = try pages.next(canonical: canonical) } catch let error as HubError where error.code == HubError.Code.forbidden {
            throw HubGate.forbidden(error, binding: listBindings[id] ?? "a hub list", context: self)
        } catch let error as HubError where error.code == HubError.Code.featureDisabled {
            page = nil   // the Hub turned the list's feature off (warned once): the list ends
        }
        guard let page else {
            closeList(id)
            return nil
        }
        list.advance(to: pages.cursorAfterLastPage)
        try recorded.record(key: key, method: "GET", path: list.path, .page(items: page.canonicalItems(), next: pages.cursorAfterLastPage),
                            masking: writes.masking.processWide)
        advanceBar(id, by: page.count)
        return page
    }

    private func advanceBar(_ id: Int, by count: Int) {
        if var bar = listProgress[id] {
            bar.count += Int64(count)
            listProgress[id] = bar
            progress?.advanced(bar)
        }
    }

    // MARK: Writes

    /// Sends `write` through the coordinator; a 204 answer becomes `true`. `feature`: as
    /// for `get`. The body's canonical bytes are written once: its key is derived from
    /// them and they are sent.
    func perform(_ write: HubWrite, feature: String?) throws -> ScriptValue {
        let payload = write.body.map(CanonicalJSON.init)
        let intent = WriteIntent(method: write.method.rawValue, path: write.path, body: payload,
                                 explicitKey: write.explicitKey, summary: write.summary, predicted: write.predicted,
                                 creates: write.creates)
        let client = self.client
        let result = try performWrite(intent) { key in
            do {
                let response: HubResponse
                if write.method == .patch {
                    let body = write.body ?? [:]
                    response = try client.send(HubRequest(.patch, write.path, payload: payload ?? CanonicalJSON(body),
                                                          idempotencyKey: key, feature: feature)) { fresh in
                        write.stillApplies?(fresh.json) == true ? body : nil
                    }
                } else {
                    response = try client.send(HubRequest(write.method, write.path, payload: payload, idempotencyKey: key,
                                                          feature: feature))
                }
                return response.json == .null ? .bool(true) : ScriptValue(response.json)
            } catch let error as HubError where RejectedWrite.isDefinite(error) {
                throw RejectedWrite(error: error)
            }
        }
        if result.value.isNil { return .bool(true) }
        return result.value
    }
}
