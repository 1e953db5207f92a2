import Foundation
import HTTPKit
import Testing
@testable import HubClient

@Suite("Request conventions")
struct HeaderConventionTests {
    @Test("every request carries version, User-Agent, request id, Accept and the bearer", arguments: TransportKind.allCases)
    func standardHeaders(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in jsonResponse(["id": "usr_1"]) }
        _ = try h.client.get("/users/me")
        _ = try h.client.get("/users/me")
        let requests = h.requests
        #expect(requests.count == 2)
        for r in requests {
            #expect(r.method == "GET")
            #expect(r.headers["Substratal-Version"] == "1")
            #expect(r.headers["Accept"] == "application/json")
            #expect(r.headers["Authorization"] == "Bearer test_harness_bearer")
            let ua = try #require(r.headers["User-Agent"])
            #expect(ua.hasPrefix("Substratal-hubscript/0.1.0 ("))
            #expect(ua.hasSuffix(")"))
            let rid = try #require(r.headers["X-Request-Id"])
            #expect(UUID(uuidString: rid) != nil)
            #expect(r.headers["Content-Type"] == nil)
            #expect(r.headers["If-Match"] == nil)
            #expect(r.headers["Idempotency-Key"] == nil)
        }
        #expect(requests[0].headers["X-Request-Id"] != requests[1].headers["X-Request-Id"])
    }

    @Test("paths are encoded once: escapes pass through, everything else outside a segment's set is encoded")
    func targetEncoding() {
        func target(_ path: String, _ query: [(name: String, value: String)] = [], prefix: String = "") -> String {
            HubRequest(.get, path, query: query).target(prefix: prefix)
        }
        #expect(target("/users/usr_ada") == "/users/usr_ada")
        #expect(target("users/me", prefix: "/v1/") == "/v1/users/me")
        #expect(target("/roles/a%2Fb") == "/roles/a%2Fb")            // an escaped `/` stays one segment
        #expect(target("/x/50%/y%zz") == "/x/50%25/y%25zz")          // a `%` that starts no escape is encoded
        #expect(target("/x/a b?c#d;e") == "/x/a%20b%3Fc%23d%3Be")
        #expect(target("/x/é") == "/x/%C3%A9")
        #expect(target("/x/!$&'()*+,=:@-._~") == "/x/!$&'()*+,=:@-._~")
        #expect(target("/u", [("q", "a+b&c=d/%"), ("email", "ada@example.com")]) == "/u?q=a%2Bb%26c%3Dd%2F%25&email=ada@example.com")
    }

    @Test("the version constant and User-Agent shape")
    func userAgent() {
        #expect(HubClientVersion.current == "0.1.0")
        #expect(HubClientVersion.userAgent.range(of: #"^Substratal-hubscript/0\.1\.0 \(\w+ \d+\.\d+\.\d+\)$"#,
                                                 options: .regularExpression) != nil)
    }

    @Test("JSON bodies, idempotency key and content type on writes", arguments: TransportKind.allCases)
    func jsonBody(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in jsonResponse(status: 201, ["id": "ent_1"]) }
        let body: HubJSON = ["application_id": "app_wiki", "source": "admin_grant", "n": 3]
        let response = try h.client.post("/users/usr_1/entitlements", body: body, idempotencyKey: "key-1")
        #expect(response.status == 201)
        #expect(response.json["id"] == "ent_1")
        let r = try #require(h.requests.first)
        #expect(r.method == "POST")
        #expect(r.path == "/users/usr_1/entitlements")
        #expect(r.headers["Content-Type"] == "application/json")
        #expect(r.headers["Idempotency-Key"] == "key-1")
        #expect(try HubJSON.parse(r.body) == body)
        #expect(String(decoding: r.body, as: UTF8.self) == #"{"application_id":"app_wiki","n":3,"source":"admin_grant"}"#)
    }

    @Test("api_prefix goes before every path; query items are encoded", arguments: TransportKind.allCases)
    func prefixAndQuery(kind: TransportKind) throws {
        let h = try Harness(kind, configure: { $0.apiPrefix = "/v1/" }) { _, _ in jsonResponse(["data": [], "page": ["has_more": false]]) }
        _ = try h.client.get("/users", query: [("email", "a+b@example.com"), ("q", "ada lovelace"), ("action", "x&y")])
        let r = try #require(h.requests.first)
        #expect(r.path == "/v1/users")
        let items = r.queryItems
        #expect(items.map(\.name) == ["email", "q", "action"])
        #expect(items.map(\.value) == ["a+b@example.com", "ada lovelace", "x&y"])
    }

    @Test("login and refresh calls carry no Authorization", arguments: TransportKind.allCases)
    func unauthenticatedRequests(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in jsonResponse(["status": "ok"]) }
        _ = try h.client.send(HubRequest(.get, "/health", authenticated: false))
        #expect(h.requests.first?.headers["Authorization"] == nil)
        #expect(h.requests.first?.headers["Substratal-Version"] == "1")
    }

    @Test("the Hub's X-Request-Id and Idempotent-Replayed are exposed", arguments: TransportKind.allCases)
    func responseMetadata(kind: TransportKind) throws {
        let h = try Harness(kind) { _, _ in
            jsonResponse(status: 201, ["id": "ent_1"], headers: [("X-Request-Id", "req_server"), ("Idempotent-Replayed", "true"), ("ETag", #"W/"4""#)])
        }
        let response = try h.client.post("/users/usr_1/entitlements", body: [:], idempotencyKey: "k")
        #expect(response.requestID == "req_server")
        #expect(response.replayed)
        #expect(response.etag == #"W/"4""#)
    }

    @Test("plain HTTP is refused except on loopback")
    func tlsOnly() throws {
        let transport = InProcessTransport { _ in jsonResponse([:]) }
        let err = hubError { try HubClient(baseURL: URL(string: "http://hub.example.com")!, credential: .none, transport: transport) }
        #expect(err?.code == HubError.Code.insecureTransport)
        for url in ["http://127.0.0.1:8080", "http://127.5.6.7", "http://localhost:9", "http://[::1]:80", "https://hub.example.com"] {
            _ = try HubClient(baseURL: URL(string: url)!, credential: .none, transport: transport)
        }
        #expect(!HubTransportPolicy.isLoopback("128.0.0.1"))
        #expect(!HubTransportPolicy.isLoopback("127.0.0.1.example.com"))
        #expect(throws: HubTransportError.self) {
            _ = try LiveTransport().perform(HTTPRequestMessage(method: "GET", target: "/"), baseURL: URL(string: "http://10.0.0.1")!,
                                            timeouts: HubTimeouts())
        }
    }
}

@Suite("Live transport connections")
struct LiveConnectionTests {
    @Test("on loopback, reads and writes share one keep-alive connection (HTTPKit's client never resends)")
    func keepAlive() throws {
        let h = try Harness(.live) { request, _ in
            request.method == "GET" ? jsonResponse(["ok": true]) : jsonResponse(status: 201, ["ok": true])
        }
        for _ in 0..<20 { _ = try h.client.get("/users/me") }
        #expect(h.server?.openConnectionCount == 1)
        _ = try h.client.post("/users/usr_1/entitlements", body: [:], idempotencyKey: "k")
        #expect(h.server?.openConnectionCount == 1)
        #expect(h.requests.allSatisfy { $0.headers["Connection"] != "close" })
    }

    @Test("over URLSession (as for HTTPS), writes go out on a connection of their own")
    func urlSessionWritesUseTheirOwnConnection() throws {
        let seen = ClientLock([HTTPRequestMessage]())
        let server = try HTTPServer { request in
            seen.withLock { $0.append(request) }
            return jsonResponse(status: request.method == "GET" ? 200 : 201, ["ok": true])
        }
        server.start()
        defer { server.stop() }
        let client = try HubClient(baseURL: URL(string: "http://127.0.0.1:\(server.port)")!, credential: .apiKey("k"),
                                   transport: LiveTransport(loopbackFastPath: false),
                                   options: HubClientOptions(rateLimitPerMinute: 0))
        _ = try client.get("/users/me")
        _ = try client.post("/users/usr_1/entitlements", body: [:], idempotencyKey: "k")
        let requests = seen.withLock { $0 }
        #expect(requests.first?.headers["Connection"] != "close")
        #expect(requests.last?.headers["Connection"] == "close")
    }
}

extension LiveConnectionTests {
    @Test("reads and writes in flight together each get their own answer")
    func interleaved() throws {
        let h = try Harness(.live) { request, _ in jsonResponse(["method": .string(request.method), "path": .string(request.path)]) }
        let mismatches = ClientLock(0)
        onThreads(8) { worker in
            for i in 0..<25 {
                let path = "/probe/\(worker)/\(i)"
                let response = i % 2 == 0 ? try? h.client.get(path) : try? h.client.post(path, body: [:], idempotencyKey: path)
                if response?.json["path"]?.stringValue != path { mismatches.withLock { $0 += 1 } }
            }
        }
        #expect(mismatches.withLock { $0 } == 0)
        #expect(h.requests.count == 200)
    }
}
