import Foundation
import HTTPKit
import SystemText
import Synchronization

/// Masks, in what the Hub answers, the credentials the request carried — the
/// `Authorization` header's token (an API key or an access token) and any credential in
/// its body (`HubRequest.carriedSecrets`: a refresh token, a password) — so a server that
/// echoes the request hands nobody a key.
///
/// Every answer, whatever its status, is masked in each credential's common encodings
/// (`SecretForms.all`: raw, JSON-escaped, base64 and base64url at any offset, hex,
/// percent-encoded). A JSON body is first rewritten with its string escapes in one
/// canonical form (`JSONEscapes.canonical`: `\u0041` and `\/` as the characters they
/// stand for), which decodes to the same value, so a credential written with JSON
/// escapes of any of its characters is masked as the decoder would read it. Header values
/// are masked like the body. The masks are `<secret hub credential>`.
enum HubAnswerMask {
    /// The last few credentials' matchers (a process uses one or two).
    private static let cache = Mutex<[(credential: String, all: SecretMatcher)]>([])
    static let mask = Array("<secret hub credential>".utf8)

    static func matcher(for credential: String) -> SecretMatcher {
        cache.withLock { cache in
            if let hit = cache.first(where: { $0.credential == credential }) { return hit.all }
            let made = SecretMatcher(SecretForms.all(Array(credential.utf8), mask: mask))
            cache.insert((credential, made), at: 0)
            if cache.count > 4 { cache.removeLast() }
            return made
        }
    }

    /// `raw` with `authorization`'s token (`Bearer TOKEN`) and each of `carried` masked in
    /// its body and headers.
    static func masked(_ raw: HTTPResponseMessage, authorization: String?, carried: [String] = []) -> HTTPResponseMessage {
        let matchers = credentials(authorization, carried).map(matcher(for:))
        guard !matchers.isEmpty else { return raw }
        var out = raw
        var body = JSONEscapes.canonical(raw.body)
        var headers = raw.headers.fields.map { (name: $0.name, value: $0.value) }
        for matcher in matchers {
            if let masked = body.withUnsafeBytes({ matcher.masked($0) }) { body = Data(masked) }
            headers = headers.map { ($0.name, matcher.masked($0.value)) }
        }
        if body != raw.body { out.body = body }
        if zip(headers, raw.headers.fields).contains(where: { $0.0.value != $0.1.value }) { out.headers = HTTPHeaders(headers.map { ($0.name, $0.value) }) }
        return out
    }

    /// `error` (a transport failure, whose text may quote the server's first bytes, cut
    /// short) with each credential masked in its encodings and in pieces
    /// (`SecretPieces`: any run of twelve or more of its characters).
    static func masked(_ error: HubError, authorization: String?, carried: [String] = []) -> HubError {
        var out = error
        let text = String(decoding: mask, as: UTF8.self)
        for credential in credentials(authorization, carried) {
            let matcher = matcher(for: credential)
            out.message = SecretPieces.masked(matcher.masked(out.message), secret: credential, mask: text)
            out.hint = SecretPieces.masked(matcher.masked(out.hint), secret: credential, mask: text)
        }
        return out
    }

    /// The credentials a request carried: `authorization`'s bearer token and `carried`,
    /// those long enough to mask.
    private static func credentials(_ authorization: String?, _ carried: [String]) -> [String] {
        var credentials = carried
        if let authorization, authorization.hasPrefix("Bearer ") { credentials.append(String(authorization.dropFirst("Bearer ".count))) }
        return credentials.filter { $0.utf8.count >= SecretForms.minimumLength }
    }
}
