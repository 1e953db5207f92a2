import Foundation

/// A PostgreSQL connection URL (`postgresql://` or `postgres://`, as libpq reads it),
/// kept with what must never be shown: its password.
///
/// Contracts:
/// - `redacted` is the URL with the password (in the user info, or a `password=`
///   query parameter) replaced by `***`: the only form of the URL to print.
/// - `redact(_:)` masks the password, as written and percent-decoded, in any text
///   (libpq's messages may quote parts of the URL they could not parse).
public struct PostgresURL: Sendable, Equatable, CustomStringConvertible {
    /// The URL as given, password included: hand it to libpq only.
    public let text: String
    /// The password the URL carries (decoded), if any.
    let password: String?
    /// The URL with its password masked.
    public let redacted: String

    /// Whether `text` names a PostgreSQL server (`postgresql://` or `postgres://`).
    public static func isPostgresURL(_ text: String) -> Bool {
        let lower = text.lowercased()
        return lower.hasPrefix("postgresql://") || lower.hasPrefix("postgres://")
    }

    /// - Throws: `PostgresError` (`.badURL`) when `text` is not a `postgresql://` or
    ///   `postgres://` URL; the message shows the URL redacted.
    public init(_ text: String) throws {
        self.text = text
        var secrets: [String] = []
        var redacted = text
        if let scheme = text.range(of: "://") {
            let rest = text[scheme.upperBound...]
            let authorityEnd = rest.firstIndex(where: { $0 == "/" || $0 == "?" }) ?? rest.endIndex
            let authority = rest[..<authorityEnd]
            if let at = authority.lastIndex(of: "@"), let colon = authority[..<at].firstIndex(of: ":") {
                let raw = String(authority[authority.index(after: colon)..<at])
                if !raw.isEmpty {
                    secrets.append(raw)
                    redacted = String(text[..<authority.index(after: colon)]) + "***" + String(text[at...])
                }
            }
        }
        // `password=` in the query string (libpq accepts any connection keyword there).
        if let query = redacted.firstIndex(of: "?") {
            var out = String(redacted[...query])
            let pairs = redacted[redacted.index(after: query)...].split(separator: "&", omittingEmptySubsequences: false)
            out += pairs.map { pair -> String in
                guard pair.lowercased().hasPrefix("password=") else { return String(pair) }
                let value = String(pair.dropFirst("password=".count))
                if !value.isEmpty { secrets.append(value) }
                return "password=***"
            }.joined(separator: "&")
            redacted = out
        }
        self.password = secrets.first.map { $0.removingPercentEncoding ?? $0 }
        self.secrets = secrets + secrets.compactMap { $0.removingPercentEncoding }.filter { !$0.isEmpty }
        self.redacted = redacted
        guard Self.isPostgresURL(text) else {
            throw PostgresError(.badURL, "\(self.redacted) is not a PostgreSQL URL: it must start with postgresql:// or postgres://")
        }
        guard !text.utf8.contains(0), text.utf8.count <= 4096 else {
            let reason = text.utf8.contains(0) ? "contains a NUL byte" : "is longer than 4096 bytes"
            throw PostgresError(.badURL, "the PostgreSQL URL \(String(self.redacted.prefix(200)).replacingOccurrences(of: "\0", with: "\\0")) \(reason)")
        }
    }

    private let secrets: [String]

    /// `message` with every form of the password replaced by `***`.
    public func redact(_ message: String) -> String {
        var out = message
        for secret in secrets.sorted(by: { $0.count > $1.count }) where !secret.isEmpty {
            out = out.replacingOccurrences(of: secret, with: "***")
        }
        return out
    }

    public var description: String { redacted }

    public static func == (a: PostgresURL, b: PostgresURL) -> Bool { a.text == b.text }
}
