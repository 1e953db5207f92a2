import DispatchClient
import Foundation
import HTTPKit
import HubClient
import ScriptHost
import XCTest
@testable import Secrets
@testable import RecipeModules

/// A Dispatch server that echoes the request's `Authorization` header — raw, base64,
/// base64url, hex, percent-encoded, JSON-escaped — into every part of its answer
/// (error code, message, a redirect's `Location`, a receipt's id), at every status.
/// The recipe gets each answer as a value and tries to recover the token from it,
/// reversed too; nothing it holds decodes to the token.
final class DispatchEchoMaskingTests: XCTestCase {
    /// Visible ASCII only (Dispatch tokens are), with the characters encoders treat apart.
    static let token = "dsp_live_Qx9/+k=\"7\\zMIDDLEPART~AB"
    /// What a recovered copy would contain.
    static let middle = "zMIDDLEPART"

    /// The encodings a careless server uses.
    static func encodings(_ text: String) -> [String] {
        let data = Data(text.utf8)
        let b64 = data.base64EncodedString()
        let json = String(data: try! JSONSerialization.data(withJSONObject: [text]), encoding: .utf8)!
        return [
            text, b64, b64.replacingOccurrences(of: "+", with: "-").replacingOccurrences(of: "/", with: "_"),
            data.map { String(format: "%02x", $0) }.joined(), data.map { String(format: "%02X", $0) }.joined(),
            text.addingPercentEncoding(withAllowedCharacters: .alphanumerics)!, String(json.dropFirst(2).dropLast(2)),
        ]
    }

    /// Answers request n with encoding n % encodings, in the shape n / encodings picks.
    final class Echo: @unchecked Sendable {
        private let lock = NSLock()
        private var count = 0
        static let shapes = 5
        var server: HTTPServer!

        init() throws {
            server = try HTTPServer(port: 0, handler: { [unowned self] request in self.answer(request) })
            server.start()
        }

        func answer(_ request: HTTPRequestMessage) -> HTTPResponseMessage {
            let n = lock.withLock { count += 1; return count - 1 }
            let forms = DispatchEchoMaskingTests.encodings(request.headers["Authorization"] ?? "")
            let echo = forms[n % forms.count]
            let json = { (object: Any) in try! JSONSerialization.data(withJSONObject: object) }
            switch n / forms.count {
            case 0: return HTTPResponseMessage(status: 400, headers: ["Content-Type": "application/json"],
                                               body: json(["error": ["code": "invalid_title", "message": "bad header " + echo]]))
            case 1: return HTTPResponseMessage(status: 401, headers: ["Content-Type": "application/json"],
                                               body: json(["error": ["code": echo, "message": echo]]))
            case 2: return HTTPResponseMessage(status: 418, headers: ["Content-Type": "application/json"],
                                               body: json(["error": ["code": "teapot_" + echo, "message": "you sent " + echo]]))
            case 3: return HTTPResponseMessage(status: 302, headers: ["Location": "https://elsewhere.example/?h=" + echo])
            default: return HTTPResponseMessage(status: 202, headers: ["Content-Type": "application/json"],
                                                body: json(["id": echo, "acceptedDevices": 1]))
            }
        }
    }

    /// Whether `text` yields the token's middle by any decoding a recipe could apply.
    static func recovers(_ text: String) -> Bool {
        var candidates = [text, String(text.reversed())]
        for t in Array(candidates) {
            candidates.append(t.removingPercentEncoding ?? "")
            candidates.append(t.replacingOccurrences(of: "\\\"", with: "\"").replacingOccurrences(of: "\\\\", with: "\\")
                .replacingOccurrences(of: "\\/", with: "/"))
            for run in t.split(whereSeparator: { !$0.isHexDigit }) where run.count >= 2 {
                for start in 0..<2 {
                    let digits = Array(run.dropFirst(start))
                    let bytes = stride(from: 0, to: digits.count - 1, by: 2).compactMap { UInt8(String(digits[$0...$0 + 1]), radix: 16) }
                    candidates.append(String(decoding: bytes, as: UTF8.self))
                }
            }
            let alphabet = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789+/-_")
            for run in t.split(whereSeparator: { !alphabet.contains($0) }) where run.count >= 4 {
                let std = run.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
                for start in 0..<4 {
                    var chunk = String(std.dropFirst(start))
                    chunk = String(chunk.prefix(chunk.count / 4 * 4))
                    if let data = Data(base64Encoded: chunk) { candidates.append(String(decoding: data, as: UTF8.self)) }
                }
            }
        }
        return candidates.contains { $0.contains(middle) }
    }

    func testTheDecoderFindsTheTokenInEveryEncodingUnmasked() {
        // The check itself: every encoding of the header, at every base64 offset, is caught.
        for prefix in ["Bearer ", "Bearer x", "Bearer xy"] {
            for form in Self.encodings(prefix + Self.token) {
                XCTAssertTrue(Self.recovers("said: " + form), form)
                XCTAssertTrue(Self.recovers(String(("said: " + form).reversed())), form)
            }
        }
    }

    func testAnEchoedTokenNeverReachesTheRecipeWhateverTheStatusAndEncoding() throws {
        let h = try GatingTests.Harness()
        let echo = try Echo()
        defer { echo.server.stop() }
        let count = Self.encodings("x").count * Echo.shapes
        let prepared = try h.recipe("echo.lua", """
            recipe { name = "echo", needs = { "dispatch.send" }, targets = { "ops" }, limits = { writes = 100 } }
            local conn = dispatch.connect("ops")
            for i = 1, \(count) do
              local ok, r = pcall(conn.send, conn, { title = "t" .. i, body = "b" })
              if ok then
                print("ok", r.id, r.id:reverse())
              else
                print(r.status, r.code, r.message, r.hint, r.code:reverse(), r.message:reverse(), (r.hint or ""):reverse())
              end
            end
            """)
        let output = MemoryOutput()
        let target = DispatchTarget(profile: "jobs", endpoint: .server(url: URL(string: "http://127.0.0.1:\(echo.server.port)")!,
                                                                        tokenRef: "dispatch/ops"), name: "ops")
        let outcome = try h.execute(prepared, try h.jobs, output: output) { request in
            request.secrets = FixedSecrets(["dispatch/ops": Self.token])
            request.dispatchTargets = ["ops": target]
        }
        XCTAssertEqual(outcome.exitCode, 0, "\(String(describing: outcome.failure))")
        XCTAssertEqual(output.lines.count, count, output.lines.joined(separator: "\n"))
        XCTAssertEqual(output.lines.filter { $0.contains("<secret dispatch/ops>") }.count, count,
                       "every answer held the token, masked: \(output.lines.joined(separator: "\n"))")
        for line in output.lines + output.events.map({ "\($0.fields)" }) {
            XCTAssertFalse(Self.recovers(line), "the recipe or --json could recover the token from: \(line)")
        }
    }
}
