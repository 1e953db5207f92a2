import Foundation
import HTTPKit
import Testing
@testable import HubClient

/// A Hub (or something posing as one) that echoes the request's `Authorization` header
/// into its answer: the API key never comes back in what the client returns — the
/// error's code, message, details, a redirect's `Location`, any header — raw or encoded.
@Suite("Answer masking")
struct AnswerMaskTests {
    static let key = "satk_live_Echo/+=Key_0123456789"

    static func encodings(_ header: String) -> [String] {
        let data = Data(header.utf8)
        let b64 = data.base64EncodedString()
        return [header, b64, b64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"),
                data.map { String(format: "%02x", $0) }.joined(), data.map { String(format: "%02X", $0) }.joined(),
                header.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!]
    }

    @Test("an echoed key is masked in every encoding, at every error status", arguments: TransportKind.allCases)
    func echoedKey(kind: TransportKind) throws {
        let forms = Self.encodings("Bearer " + Self.key)
        let statuses = [400, 401, 403, 404, 422, 500]
        let h = try Harness(kind, credential: .apiKey(Self.key), configure: { $0.retry = RetryPolicy(maxAttempts: 1) }) { request, _ in
            let index = Int(request.path.split(separator: "/").last!)!
            let echo = forms[index % forms.count]
            return errorResponse(statuses[index / forms.count], "code_" + echo, details: ["echo": .string(echo)],
                                 headers: [("X-Echo", echo)])
        }
        for index in 0..<(forms.count * statuses.count) {
            let err = try #require(hubError { try h.client.post("/probe/\(index)", body: ["a": 1]) })
            let text = "\(err.code) \(err.message) \(err.details.map { "\($0)" } ?? "") \(err.hint)"
            #expect(text.contains("<secret hub credential>"), "\(index): \(text)")
            for form in forms + forms.map({ String($0.reversed()) }) {
                #expect(!text.contains(form) && !String(text.reversed()).contains(form), "\(index): \(text)")
            }
            #expect(!text.contains("Echo/+=Key") && !text.contains("0123456789"), "\(index): \(text)")
        }
    }

    @Test("a redirect's Location and a 2xx body never carry the key")
    func redirectAndSuccess() throws {
        let h = try Harness(.inProcess, credential: .apiKey(Self.key)) { request, _ in
            if request.path.hasSuffix("/moved") {
                return HTTPResponseMessage(status: 302, headers: ["Location": "https://elsewhere.test/?k=" + (request.headers["Authorization"] ?? "")])
            }
            return jsonResponse(["id": "usr_1", "note": .string(request.headers["Authorization"] ?? "")])
        }
        let err = try #require(hubError { try h.client.get("/users/moved") })
        #expect(err.message == "The server answered 302 redirecting to https://elsewhere.test/?k=Bearer <secret hub credential>")
        let ok = try h.client.get("/users/usr_1")
        #expect(ok.json["note"]?.stringValue == "Bearer <secret hub credential>")
    }

    /// `text` as a JSON string's contents with every character written `\uXXXX`
    /// (`upper`: upper-case hex digits), as some JSON writers escape.
    static func unicodeEscaped(_ text: String, upper: Bool = false) -> String {
        text.utf16.map { String(format: upper ? "\\u%04X" : "\\u%04x", $0) }.joined()
    }

    /// The JSON-string forms of `text` that a decoder reads back as `text` itself: every
    /// character `\uXXXX` (either case of hex), every other one, and `/` as `\/` once only.
    static func escapedForms(_ text: String) -> [String] {
        let every = unicodeEscaped(text), everyUpper = unicodeEscaped(text, upper: true)
        let alternate = text.enumerated().map { $0.offset % 2 == 0 ? unicodeEscaped(String($0.element)) : String($0.element) }.joined()
        let oneSlash = text.replacingOccurrences(of: "/", with: "\\/", options: [], range: text.range(of: "/"))
        return [every, everyUpper, alternate, oneSlash]
    }

    @Test("a key echoed with JSON \\u escapes is masked once decoded, at every status", arguments: TransportKind.allCases)
    func unicodeEscapedEcho(kind: TransportKind) throws {
        let forms = Self.escapedForms("Bearer " + Self.key)
        let statuses = [200, 400, 401, 422, 500]
        let h = try Harness(kind, credential: .apiKey(Self.key), configure: { $0.retry = RetryPolicy(maxAttempts: 1) }) { request, _ in
            let index = Int(request.path.split(separator: "/").last!)!
            let echo = forms[index % forms.count], status = statuses[index / forms.count]
            let body = status == 200 ? "{\"id\":\"usr_1\",\"note\":\"\(echo)\"}"
                : "{\"error\":{\"code\":\"c\(echo)\",\"message\":\"m\(echo)\",\"details\":{\"echo\":\"\(echo)\"}}}"
            return HTTPResponseMessage(status: status, headers: ["Content-Type": "application/json"], body: Data(body.utf8))
        }
        for index in 0..<(forms.count * statuses.count) {
            let text: String
            if statuses[index / forms.count] == 200 {
                text = try h.client.get("/probe/\(index)").json["note"]?.stringValue ?? ""
                #expect(text == "Bearer <secret hub credential>", "\(index): \(text)")
            } else {
                let err = try #require(hubError { try h.client.post("/probe/\(index)", body: ["a": 1]) })
                text = "\(err.code) \(err.message) \(err.details.map { "\($0)" } ?? "")"
                #expect(err.message == "mBearer <secret hub credential>", "\(index): \(err.message)")
            }
            #expect(!text.contains("Echo/+=Key") && !text.contains("0123456789"), "\(index): \(text)")
        }
    }

    @Test("a 2xx answer echoing the key in base64, hex or percent-encoded is masked too", arguments: TransportKind.allCases)
    func encodedEchoInSuccess(kind: TransportKind) throws {
        let forms = Self.encodings("Bearer " + Self.key)
        let h = try Harness(kind, credential: .apiKey(Self.key)) { request, _ in
            let echo = forms[Int(request.path.split(separator: "/").last!)!]
            return jsonResponse(["id": "usr_1", "note": .string(echo)], headers: [("X-Echo", echo)])
        }
        for index in forms.indices {
            let ok = try h.client.get("/users/\(index)")
            let text = (ok.json["note"]?.stringValue ?? "") + " " + (ok.headers["X-Echo"] ?? "")
            #expect(text.contains("<secret hub credential>"), "\(index): \(text)")
            #expect(!text.contains("Echo/+=Key") && !text.contains("0123456789"), "\(index): \(text)")
            for form in forms { #expect(!text.contains(form), "\(index): \(text)") }
        }
    }

    @Test("a refresh token echoed in the refresh answer's error is masked", arguments: TransportKind.allCases)
    func refreshTokenEcho(kind: TransportKind) throws {
        let refresh = "rt_Echo/+=Refresh_0123456789"
        let store = InMemoryCredentialStore(["test": StoredSession(refreshToken: refresh)])
        let forms = Self.encodings(refresh) + Self.escapedForms(refresh)
        let h = try Harness(kind, credential: .session(profile: "test", store: store),
                            configure: { $0.retry = RetryPolicy(maxAttempts: 1) }) { request, _ in
            let body = forms.map { "\"\($0)\"" }.joined(separator: ",")
            return HTTPResponseMessage(status: 400, headers: ["Content-Type": "application/json", "X-Echo": forms[1]],
                                       body: Data("{\"error\":{\"code\":\"bad_refresh\",\"message\":\"refused\",\"details\":{\"echo\":[\(body)]}}}".utf8))
        }
        let err = try #require(hubError { try h.client.get("/users/me") })
        let text = "\(err.code) \(err.message) \(err.details.map { "\($0)" } ?? "") \(err.hint)"
        #expect(h.requests.map(\.path) == ["/auth/token/refresh"])
        #expect(text.contains("<secret hub credential>"), "\(text)")
        #expect(!text.contains("Echo/+=Refresh") && !text.contains("0123456789"), "\(text)")
        for form in forms { #expect(!text.contains(form), "\(text)") }
    }

    /// A transport that fails as a server that echoes the request into what is not an
    /// HTTP answer would make it fail: the error's text quotes the server's first bytes,
    /// cut at `cut` bytes.
    struct EchoingBrokenTransport: HubTransport {
        let prefix: String
        let cut: Int
        func perform(_ request: HTTPRequestMessage, baseURL: URL, timeouts: HubTimeouts) throws -> HTTPResponseMessage {
            let echoed = prefix + (request.headers["Authorization"] ?? "")
            throw HubTransportError(.connectionLost, "not an HTTP/1.1 status line: " + String(echoed.prefix(cut)))
        }
    }

    @Test("a transport error quoting the server's bytes never carries the key, whole or cut short")
    func transportErrorEcho() throws {
        // The key whole, then cut after 20 and 12 of its 30 characters.
        for cut in [100, 40, 32] {
            let transport = EchoingBrokenTransport(prefix: "XTTP/1.1 200 ", cut: cut)
            let client = try HubClient(baseURL: URL(string: "https://hub.test")!, credential: .apiKey(Self.key), transport: transport,
                                       options: HubClientOptions(rateLimitPerMinute: 0, retry: RetryPolicy(maxAttempts: 1),
                                                                 clock: FakeClock(), random: FixedRandom()))
            let err = try #require(hubError { try client.get("/users/usr_1") })
            #expect(err.code == HubError.Code.transportError)
            #expect(err.message.hasPrefix("No response from the Hub: not an HTTP/1.1 status line: XTTP/1.1 200 Bearer <secret hub credential>"), "\(cut): \(err.message)")
            #expect(!err.message.contains("satk_live_Ec") && !err.message.contains("Echo/+=K"), "\(cut): \(err.message)")
        }
    }

    @Test("an answer that is not JSON keeps its backslashes as they are")
    func nonJSONAnswerIsLeftAlone() throws {
        let csv = "path,note\nC:\\u0041dir\\x,\\/ok\n"
        let json = #" {"note":"\u0041\/b\\u0041","n":"\"\u000a"}"#
        let h = try Harness(.inProcess, credential: .apiKey(Self.key)) { request, _ in
            let body = request.path.hasSuffix("csv") ? csv : json
            return HTTPResponseMessage(status: 200, headers: ["Content-Type": "text/plain"], body: Data(body.utf8))
        }
        var raw = HubRequest(.get, "/exports/csv")
        raw.decodesBody = false
        #expect(String(decoding: try h.client.send(raw).body, as: UTF8.self) == csv)
        var page = HubRequest(.get, "/exports/json")
        page.decodesBody = false
        #expect(String(decoding: try h.client.send(page).body, as: UTF8.self) == #" {"note":"A/b\\u0041","n":"\"\n"}"#)
    }
}
