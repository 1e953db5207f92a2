import CPostgres
import Foundation

/// A PostgreSQL connection URL (`postgresql://` or `postgres://`, as libpq reads it),
/// kept with what must never be shown: its passwords.
///
/// Contracts:
/// - `redacted` is the URL with every password masked (`***`): the user info's, as
///   libpq reads it (up to the first `@`) and as it was likely meant (up to the last
///   `@` of the authority, when a password holds an unencoded `@`), and the value of
///   every query parameter whose percent-decoded name is `password` or `sslpassword`
///   (`pass%77ord=`). It is the only form of the URL to print.
/// - `redact(_:)` masks, in any text, each such password as written and
///   percent-decoded, each piece of a password split at an unencoded `@`, `/`, `:`,
///   `?` or `,` (libpq may read what follows the first `@` as the host, or pieces
///   before a `/` as host and port, and quote them), and the `password` and
///   `sslpassword` values libpq itself parses from the URL (`PQconninfoParse`), so no
///   message of libpq's shows any of them.
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// The URL as given, passwords included: hand it to libpq only.
    public let text: String
    /// The password the URL's user info carries (decoded, as libpq reads it), if any.
    let password: String?
    /// The URL with its passwords masked.
    public let redacted: String
    /// Keywords whose values are secrets.
    static let secretKeywords: Set<String> = ["password", "sslpassword"]

    /// Whether `text` names a PostgreSQL server (`postgresql://` or `postgres://`).
    public static func isPostgresURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    /// - Throws: `PostgresError` (`.badURL`) when `text` is not a `postgresql://` or
    ///   `postgres://` URL; the message shows the URL redacted.
    public init(_ text: String) throws {
        self.text = text
        let found = Self.secretSpans(text)
        var redacted = text
        for span in found.spans.sorted(by: { $0.lowerBound > $1.lowerBound }) {
            redacted.replaceSubrange(span, with: "***")
        }
        self.redacted = redacted
        self.password = found.userPassword.map { Self.decoded($0) }
        var secrets = Set<String>()
        for span in found.spans {
            let raw = String(text[span])
            secrets.insert(raw)
            secrets.insert(Self.decoded(raw))
            // Pieces at an unencoded '@', '/', ':', '?' or ',': libpq may read what
            // follows one as the host, the port or the database, and quote it.
            for piece in raw.split(whereSeparator: { "@/:?,".contains($0) }) {
                secrets.insert(String(piece))
                secrets.insert(Self.decoded(String(piece)))
            }
        }
        secrets.remove("")
        self.secrets = secrets.sorted { $0.count > $1.count || ($0.count == $1.count && $0 < $1) }
        guard Self.isPostgresURL(text) else {
            throw PostgresError(.badURL, "\(self.redacted) is not a PostgreSQL URL: it must start with postgresql:// or postgres://")
        }
        guard !text.utf8.contains(0), text.utf8.count <= 4096 else {
            let reason = text.utf8.contains(0) ? "contains a NUL byte" : "is longer than 4096 bytes"
            throw PostgresError(.badURL, "the PostgreSQL URL \(String(self.redacted.prefix(200)).replacingOccurrences(of: "\0", with: "\\0")) \(reason)")
        }
    }

    /// Every form of every password, longest first.
    private let secrets: [String]

    /// `message` with every form of every password replaced by `***`, including the
    /// values libpq parses for `password` and `sslpassword`.
    public func redact(_ message: String) -> String {
        var all = secrets
        for value in libpqSecrets() where !value.isEmpty && !all.contains(value) { all.append(value) }
        var out = message
        for secret in all.sorted(by: { $0.count > $1.count }) {
            out = out.replacingOccurrences(of: secret, with: "***")
        }
        return out
    }

    public var description: String { redacted }

    public static func == (a: PostgresURL, b: PostgresURL) -> Bool { a.text == b.text }

    // MARK: Finding the passwords

    /// The ranges of `text` that hold a password, and the user info's password as
    /// libpq reads it.
    static func secretSpans(_ text: String) -> (spans: [Range<String.Index>], userPassword: String?) {
        var spans: [Range<String.Index>] = []
        var userPassword: String?
        guard let scheme = text.range(of: "://") else { return ([], nil) }
        let rest = text[scheme.upperBound...]
        // libpq: the user info ends at the first '@' before any '/'; the password
        // starts after the first ':' in it.
        let beforePath = rest[..<(rest.firstIndex(of: "/") ?? rest.endIndex)]
        if let firstAt = beforePath.firstIndex(of: "@"), let colon = beforePath[..<firstAt].firstIndex(of: ":") {
            let start = text.index(after: colon)
            userPassword = String(text[start..<firstAt])
            // What follows is the host for libpq, up to ':', '/', '?' or ','; an '@' in it
            // means the password held an unencoded '@': mask up to the last one.
            let hostStart = text.index(after: firstAt)
            let host = beforePath[hostStart...].prefix { !":/?,".contains($0) }
            let end = host.lastIndex(of: "@") ?? firstAt
            if start < end { spans.append(start..<end) }
        } else {
            // A password with an unencoded '/' hides the '@' from libpq's look-ahead
            // (libpq then reads pieces of it as host, port or database): mask from the
            // first ':' to the last '@' before the query.
            let beforeQuery = rest[..<(rest.firstIndex(of: "?") ?? rest.endIndex)]
            if let lastAt = beforeQuery.lastIndex(of: "@"), let colon = beforeQuery[..<lastAt].firstIndex(of: ":") {
                let start = text.index(after: colon)
                if start < lastAt { spans.append(start..<lastAt) }
            }
        }
        // Query parameters: libpq percent-decodes names and values.
        if let query = text.firstIndex(of: "?") {
            var pairStart = text.index(after: query)
            while pairStart <= text.endIndex {
                let pairEnd = text[pairStart...].firstIndex(of: "&") ?? text.endIndex
                let pair = text[pairStart..<pairEnd]
                if let equals = pair.firstIndex(of: "="),
                   secretKeywords.contains(decoded(String(pair[..<equals])).lowercased()) {
                    let value = text.index(after: equals)..<pairEnd
                    if !value.isEmpty { spans.append(value) }
                }
                guard pairEnd < text.endIndex else { break }
                pairStart = text.index(after: pairEnd)
            }
        }
        return (spans, userPassword)
    }

    /// Percent-decoded as libpq decodes (the text itself if it is not valid).
    static func decoded(_ text: String) -> String { text.removingPercentEncoding ?? text }

    /// The `password` and `sslpassword` values libpq parses from the URL; none if it
    /// cannot parse it (its message is not used: it may quote the URL).
    func libpqSecrets() -> [String] {
        var error: UnsafeMutablePointer<CChar>?
        guard let options = PQconninfoParse(text, &error) else {
            if let error { PQfreemem(error) }
            return []
        }
        defer { PQconninfoFree(options) }
        var values: [String] = []
        var option = options
        while let keyword = option.pointee.keyword {
            if Self.secretKeywords.contains(String(cString: keyword)), let value = option.pointee.val {
                values.append(String(cString: value))
            }
            option += 1
        }
        return values
    }
}
