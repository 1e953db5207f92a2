import Foundation
import HTTPKit
import SystemText

/// Masks, in what the Hub answers, the credential the request carried: a server that
/// echoes the `Authorization` header hands nobody the API key or the access token.
///
/// An error answer (any status but 2xx) is masked in the credential's common encodings
/// (`SecretForms.all`: JSON-escaped, base64 and base64url at any offset, hex,
/// percent-encoded) — that is where servers echo headers; a 2xx answer in its raw and
/// JSON-escaped forms (pages are large, and masking each encoding costs about 2 ns a
/// byte). Header values are masked like the body. The masks are `<secret hub credential>`.
enum HubAnswerMask {
    private static let lock = NSLock()
    /// The last few credentials' matchers (a process uses one or two).
    private nonisolated(unsafe) static var cache: [(credential: String, plain: SecretMatcher, all: SecretMatcher)] = []
    static let mask = Array("<secret hub credential>".utf8)

    static func matchers(for credential: String) -> (plain: SecretMatcher, all: SecretMatcher) {
        lock.withLock {
            if let hit = cache.first(where: { $0.credential == credential }) { return (hit.plain, hit.all) }
            let bytes = Array(credential.utf8)
            let made = (SecretMatcher(SecretForms.plain(bytes, mask: mask)), SecretMatcher(SecretForms.all(bytes, mask: mask)))
            cache.insert((credential, made.0, made.1), at: 0)
            if cache.count > 4 { cache.removeLast() }
            return made
        }
    }

    /// `raw` with `authorization` (`Bearer TOKEN`)'s token masked in its body and headers.
    static func masked(_ raw: HTTPResponseMessage, authorization: String?) -> HTTPResponseMessage {
        guard let authorization, authorization.hasPrefix("Bearer ") else { return raw }
        let token = String(authorization.dropFirst("Bearer ".count))
        guard token.utf8.count >= SecretForms.minimumLength else { return raw }
        let both = matchers(for: token)
        let matcher = (200..<300).contains(raw.status) ? both.plain : both.all
        var out = raw
        if let body = raw.body.withUnsafeBytes({ matcher.masked($0) }) { out.body = Data(body) }
        let fields = raw.headers.fields.map { ($0.name, matcher.masked($0.value)) }
        if zip(fields, raw.headers.fields).contains(where: { $0.0.1 != $0.1.value }) { out.headers = HTTPHeaders(fields) }
        return out
    }
}
