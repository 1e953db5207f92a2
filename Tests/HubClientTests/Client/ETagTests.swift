import Foundation
import HTTPKit
import Testing
@testable import HubClient

@Suite("ETags and version conflicts")
struct ETagTests {
    /// A resource store: GET answers the current version; PATCH/DELETE need If-Match
    /// equal to it (409 version_conflict otherwise) and bump it.
    final class Versioned: @unchecked Sendable {
        let lock = NSLock()
        var version = 1
        var status: HubJSON = "active"

        func handle(_ request: HTTPRequestMessage, _ index: Int) -> HTTPResponseMessage {
            lock.withLock {
                let etag = #"W/"\#(version)""#
                switch request.method {
                case "GET":
                    return jsonResponse(["id": "ent_1", "status": status], headers: [("ETag", etag)])
                case "PATCH", "DELETE":
                    guard request.headers["If-Match"] == etag else {
                        return errorResponse(409, "version_conflict", details: ["current_etag": .string(etag)])
                    }
                    version += 1
                    if request.method == "DELETE" { return emptyResponse(204) }
                    status = (try? HubJSON.parse(request.body))?["status"] ?? status
                    return jsonResponse(["id": "ent_1", "status": status], headers: [("ETag", #"W/"\#(version)""#)])
                default:
                    return errorResponse(405, "invalid_request")
                }
            }
        }

        /// Someone else changes the resource.
        func bump() { lock.withLock { version += 1; status = "disabled" } }
    }

    @Test("the ETag of a GET goes out as If-Match on the PATCH", arguments: TransportKind.allCases)
    func cachedIfMatch(kind: TransportKind) throws {
        let store = Versioned()
        let h = try Harness(kind) { store.handle($0, $1) }
        let read = try h.client.get("/entitlements/ent_1")
        #expect(read.etag == #"W/"1""#)
        #expect(h.client.etag(for: "/entitlements/ent_1") == #"W/"1""#)
        let patched = try h.client.patch("/entitlements/ent_1", body: ["status": "disabled", "disabled_reason": "x"])
        #expect(h.requests.last?.headers["If-Match"] == #"W/"1""#)
        #expect(patched.etag == #"W/"2""#)
        // The PATCH's own ETag is cached for the next write.
        _ = try h.client.delete("/entitlements/ent_1")
        #expect(h.requests.last?.headers["If-Match"] == #"W/"2""#)
        #expect(h.client.etag(for: "/entitlements/ent_1") == nil)
    }

    @Test("If-Match goes only to users, entitlements, roles and settings")
    func whichPaths() {
        func takes(_ method: HubMethod, _ path: String) -> Bool { HubRequest(method, path).takesIfMatch }
        #expect(takes(.patch, "/users/usr_1"))
        #expect(takes(.patch, "/users/me"))
        #expect(takes(.delete, "/roles/role_x"))
        #expect(takes(.patch, "/entitlements/ent_1"))
        #expect(takes(.patch, "/users/me/settings"))
        #expect(!takes(.get, "/users/usr_1"))
        #expect(!takes(.post, "/users/usr_1/suspend"))
        #expect(takes(.delete, "/users/usr_1/roles/role_support"))
        #expect(takes(.post, "/users/usr_1/roles/role_support"))
        #expect(HubRequest(.post, "/users/usr_1/roles/role_support").etagPath == "/users/usr_1/roles")
        #expect(!takes(.get, "/users/usr_1/roles"))
        #expect(!takes(.delete, "/api-keys/key_1"))
    }

    @Test("a caller's If-Match wins over the cache; other writes carry none", arguments: TransportKind.allCases)
    func explicit(kind: TransportKind) throws {
        let store = Versioned()
        let h = try Harness(kind) { store.handle($0, $1) }
        _ = try h.client.get("/entitlements/ent_1")
        #expect(hubError { try h.client.patch("/entitlements/ent_1", body: ["status": "disabled"], ifMatch: #"W/"9""#) }?.code == "version_conflict")
        #expect(h.requests.last?.headers["If-Match"] == #"W/"9""#)
        _ = hubError { try h.client.delete("/api-keys/key_1") }
        #expect(h.requests.last?.headers["If-Match"] == nil)
    }

    @Test("version_conflict refetches, asks reapply, and resends with the new ETag", arguments: TransportKind.allCases)
    func reapply(kind: TransportKind) throws {
        let store = Versioned()
        let h = try Harness(kind) { store.handle($0, $1) }
        _ = try h.client.get("/entitlements/ent_1")
        store.bump()
        let seen = ClientLock([HubJSON]())
        let result = try h.client.patch("/entitlements/ent_1", body: ["status": "revoked"]) { current in
            seen.withLock { $0.append(current.json["status"] ?? .null) }
            return ["status": "revoked", "disabled_reason": "reapplied"]
        }
        #expect(result.json["status"] == "revoked")
        #expect(seen.withLock { $0 } == ["disabled"])
        #expect(h.requests.map(\.method) == ["GET", "PATCH", "GET", "PATCH"])
        #expect(h.requests[3].headers["If-Match"] == #"W/"2""#)
        #expect(try HubJSON.parse(h.requests[3].body)["disabled_reason"] == "reapplied")
    }

    @Test("reapply returning nil gives up with the conflict", arguments: TransportKind.allCases)
    func giveUp(kind: TransportKind) throws {
        let store = Versioned()
        let h = try Harness(kind) { store.handle($0, $1) }
        _ = try h.client.get("/entitlements/ent_1")
        store.bump()
        let err = hubError { try h.client.patch("/entitlements/ent_1", body: ["status": "revoked"]) { _ in nil } }
        #expect(err?.code == "version_conflict")
        #expect(err?.details?["current_etag"] == #"W/"2""#)
        #expect(h.requests.map(\.method) == ["GET", "PATCH", "GET"])
        // Without reapply the conflict is thrown at once.
        store.bump()
        #expect(hubError { try h.client.patch("/entitlements/ent_1", body: ["status": "revoked"]) }?.code == "version_conflict")
        #expect(h.requests.count == 4)
    }

    @Test("DELETE reapplies too (the body is ignored)")
    func deleteReapply() throws {
        let store = Versioned()
        let h = try Harness(.inProcess) { store.handle($0, $1) }
        _ = try h.client.get("/roles/role_x")
        store.bump()
        let response = try h.client.send(HubRequest(.delete, "/roles/role_x")) { _ in [:] }
        #expect(response.status == 204)
        #expect(h.requests.last?.body.isEmpty == true)
    }
}
