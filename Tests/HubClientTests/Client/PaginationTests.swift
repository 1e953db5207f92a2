import Foundation
import HTTPKit
import Testing
@testable import HubClient

@Suite("Pagination")
struct PaginationTests {
    /// `total` items `item_0…`, served `limit` at a time with cursors "c<offset>".
    static func lister(total: Int) -> ScriptedHub.Script {
        { request, _ in
            let query = Dictionary(request.queryItems.map { ($0.name, $0.value) }, uniquingKeysWith: { a, _ in a })
            let limit = min(100, Int(query["limit"] ?? "25") ?? 25)
            let offset = query["cursor"].flatMap { Int($0.dropFirst()) } ?? 0
            let end = min(total, offset + limit)
            let items = (offset..<end).map { HubJSON.object(["id": .string("item_\($0)"), "status": .string(query["status"] ?? "any")]) }
            let more = end < total
            return jsonResponse(["data": .array(items), "page": ["next_cursor": more ? .string("c\(end)") : .null, "has_more": .bool(more)]])
        }
    }

    @Test("pages read in canonical form equal the decoded items encoded, in either order of forms", arguments: TransportKind.allCases)
    func canonicalPages(kind: TransportKind) throws {
        let h = try Harness(kind, Self.lister(total: 10))
        let expected = try h.client.paginate(path: "/x", limit: 3).allItems().map { $0.encoded() }
        #expect(expected.count == 10)
        // The prefetcher fetches each next page in the form last asked for; a page read in
        // the other form is converted, so alternating forms must still give every item once.
        let pages = PrefetchingPages(h.client.paginate(path: "/x", limit: 3).makeIterator())
        var seen: [Data] = []
        var canonical = false
        while let page = try pages.next(canonical: canonical) {
            switch page {
            case .canonical(let items): #expect(canonical); seen += items
            case .decoded(let items): #expect(!canonical); seen += items.map { $0.encoded() }
            }
            canonical.toggle()
        }
        #expect(seen == expected)
        #expect(try pages.next(canonical: true) == nil)
    }

    @Test("a list page that is not JSON is invalid_response in canonical form too")
    func canonicalPageNotJSON() throws {
        let h = try Harness(.inProcess) { _, _ in
            HTTPResponseMessage(status: 200, headers: ["Content-Type": "text/html"], body: Data("<html>".utf8))
        }
        var iterator = h.client.paginate(path: "/x").makeIterator()
        let error = try #require(throws: HubError.self) { _ = try iterator.nextPage(canonical: true) }
        #expect(error.code == HubError.Code.invalidResponse)
        #expect(error.message == "HTTP 200 with a body that is not a Hub JSON answer (text/html): <html>")
        #expect(try iterator.nextPage(canonical: true) == nil)   // the list ended
    }

    @Test("walks many pages lazily, keeping filters, and stops when has_more is false", arguments: TransportKind.allCases)
    func manyPages(kind: TransportKind) throws {
        let h = try Harness(kind, Self.lister(total: 1_234))
        let sequence = h.client.paginate(path: "/audit-events", query: [("status", "active")], limit: 50)
        #expect(h.requests.isEmpty)
        var iterator = sequence.makeIterator()
        for _ in 0..<51 { _ = try iterator.nextItem() }
        #expect(h.requests.count == 2)
        var count = 51
        while try iterator.nextItem() != nil { count += 1 }
        #expect(count == 1_234)
        #expect(iterator.pagesFetched == 25)
        #expect(h.requests.count == 25)
        #expect(h.requests.allSatisfy { r in r.queryItems.contains { $0 == ("status", "active") } && r.queryItems.contains { $0 == ("limit", "50") } })
        #expect(h.requests[0].queryItems.contains { $0.name == "cursor" } == false)
        #expect(h.requests[1].queryItems.contains { $0 == ("cursor", "c50") })
        #expect(try iterator.nextItem() == nil)
        #expect(h.requests.count == 25)
    }

    @Test("for-in iteration and allItems see every item in order")
    func forIn() throws {
        let h = try Harness(.inProcess, Self.lister(total: 230))
        var ids: [String] = []
        for item in h.client.paginate(path: "/users") { ids.append(item["id"]?.stringValue ?? "") }
        #expect(ids == (0..<230).map { "item_\($0)" })
        #expect(try h.client.paginate(path: "/users", limit: 7).allItems().count == 230)
        #expect(try h.client.paginate(path: "/users").allItems().isEmpty == false)
    }

    @Test("an empty list fetches one page")
    func empty() throws {
        let h = try Harness(.inProcess, Self.lister(total: 0))
        #expect(try h.client.paginate(path: "/users").allItems().isEmpty)
        #expect(h.requests.count == 1)
    }

    @Test("an error mid-way throws from nextItem and ends for-in with the error recorded")
    func errorMidway() throws {
        let list = Self.lister(total: 300)
        let h = try Harness(.inProcess) { request, index in
            request.queryItems.contains { $0 == ("cursor", "c100") } ? errorResponse(400, "invalid_cursor") : list(request, index)
        }
        #expect(hubError { try h.client.paginate(path: "/users").allItems() }?.code == "invalid_cursor")
        var iterator = h.client.paginate(path: "/users").makeIterator()
        var count = 0
        while iterator.next() != nil { count += 1 }
        #expect(count == 100)
        #expect(iterator.error?.code == "invalid_cursor")
        #expect(iterator.next() == nil)
    }

    @Test("a response that is not a list is invalid_response")
    func notAList() throws {
        let h = try Harness(.inProcess) { _, _ in jsonResponse(["id": "usr_1"]) }
        #expect(hubError { try h.client.paginate(path: "/users/usr_1").allItems() }?.code == HubError.Code.invalidResponse)
    }
}
