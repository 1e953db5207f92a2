import CCurlEasy
import Foundation
import HTTPKit

/// One HTTPS exchange through libcurl's easy interface (`curl_exchange.c`), used by
/// `LiveTransport` when the trust is not the system store: URLSession on Linux sets no
/// CA bundle per session (FoundationNetworking leaves libcurl's built-in one in place)
/// and reads neither `SSL_CERT_FILE` nor a profile's choice.
///
/// The same rules as the URLSession path: redirects are never followed; bodies over
/// `HubTransportPolicy.maxResponseBytes` fail; reads reuse pooled keep-alive
/// connections, every other method goes out on a fresh connection that is closed after
/// (libcurl resends a request whose reused connection died, which for a write would be
/// a silent second write); `timeouts.read` is the idle timeout between bytes.
enum CurlExchange {
    static func perform(_ request: HTTPRequestMessage, url: URL, trust: TLSTrust, timeouts: HubTimeouts) throws -> HTTPResponseMessage {
        let lines = request.headers.filter { $0.name.lowercased() != "host" }.map { "\($0.name): \($0.value)" }
        let reusesConnection = request.method == "GET" || request.method == "HEAD"
        var response = hubscript_curl_response()
        withCStrings(lines) { headers in
            url.absoluteString.withCString { urlText in
                request.method.withCString { method in
                    withOptionalCString(trust.caFile) { caFile in
                        withOptionalCString(trust.caDirectory) { caDirectory in
                            request.body.withUnsafeBytes { body in
                                var exchange = hubscript_curl_request(
                                    url: urlText, method: method, headers: headers.baseAddress, header_count: headers.count,
                                    body: body.baseAddress, body_length: body.count, ca_file: caFile, ca_dir: caDirectory,
                                    connect_timeout_ms: Int(timeouts.connect * 1000), idle_timeout_seconds: max(1, Int(timeouts.read.rounded(.up))),
                                    fresh_connection: reusesConnection ? 0 : 1, max_response_bytes: HubTransportPolicy.maxResponseBytes)
                                hubscript_curl_perform(&exchange, &response)
                            }
                        }
                    }
                }
            }
        }
        defer { hubscript_curl_response_free(&response) }
        if response.too_large != 0 {
            throw HubTransportError(.tooLarge, "response body exceeds \(HubTransportPolicy.maxResponseBytes) bytes")
        }
        guard response.code == 0 else {
            let words = withUnsafeBytes(of: response.error) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
            throw failure(code: response.code, words, url: url, trust: trust)
        }
        var headers = HTTPHeaders()
        if let bytes = response.headers {
            let text = String(decoding: UnsafeRawBufferPointer(start: bytes, count: response.headers_length), as: UTF8.self)
            for line in text.split(whereSeparator: { $0 == "\r" || $0 == "\n" }) {
                guard let colon = line.firstIndex(of: ":") else { continue }
                headers.add(String(line[..<colon]), String(HTTPHeaders.trimmingWhitespace(String(line[line.index(after: colon)...]))))
            }
        }
        let body = response.body.map { Data(bytes: $0, count: response.body_length) } ?? Data()
        return HTTPResponseMessage(status: Int(response.status), headers: headers, body: body)
    }

    /// libcurl's failure as the transport's: whether the request may have been processed,
    /// and what to do.
    static func failure(code: Int32, _ words: String, url: URL, trust: TLSTrust) -> HubTransportError {
        let origin = "\(url.scheme ?? "https")://\(url.host ?? "")\(url.port.map { ":\($0)" } ?? "")"
        switch code {
        case -1: return HubTransportError(.cannotConnect, words)
        case 5, 6, 7: return HubTransportError(.cannotConnect, "\(origin): \(words)")
        case 28: return HubTransportError(.timedOut, "no data arrived within the timeout (\(words))")
        case 63: return HubTransportError(.tooLarge, "response body exceeds \(HubTransportPolicy.maxResponseBytes) bytes")
        case 77:
            let places = [trust.caFile, trust.caDirectory].compactMap { $0 }.joined(separator: " and ")
            return HubTransportError(.untrustedCertificate,
                                     "\(origin): the CAs in \(places) could not be loaded (\(words)); "
                                     + "check that it holds PEM certificates; nothing was sent")
        case 60, 58, 83, 90, 91:
            let places = [trust.caFile, trust.caDirectory].compactMap { $0 }
            let trusted = places.isEmpty ? "the system's CAs" : "the CAs in " + places.joined(separator: " and in ")
            return HubTransportError(.untrustedCertificate,
                                     "\(origin): its TLS certificate does not verify against \(trusted) (\(words)); nothing was sent")
        case 18, 52, 55, 56, 92, 16:
            return HubTransportError(.connectionLost, "the connection closed before the response arrived (\(words))")
        default:
            // libcurl's words, as URLSession reports them (a failed TLS handshake: "OpenSSL/3.0.x: error:…").
            return HubTransportError(.other, words)
        }
    }

    private static func withCStrings<R>(_ strings: [String], _ body: (UnsafeBufferPointer<UnsafePointer<CChar>?>) -> R) -> R {
        let copies = strings.map { strdup($0) }
        defer { copies.forEach { free($0) } }
        let pointers: [UnsafePointer<CChar>?] = copies.map { $0.map { UnsafePointer($0) } }
        return pointers.withUnsafeBufferPointer(body)
    }

    private static func withOptionalCString<R>(_ text: String?, _ body: (UnsafePointer<CChar>?) -> R) -> R {
        guard let text else { return body(nil) }
        return text.withCString(body)
    }
}
