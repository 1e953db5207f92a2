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
}
