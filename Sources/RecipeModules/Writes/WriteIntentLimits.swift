import ScriptHost

/// The backstop at the write entry point: whatever a binding let through, a write whose
/// path or body is oversize, or whose path has an empty, `.` or `..` segment, is refused
/// before anything is derived, hashed, journalled or sent. The `hub` bindings check the
/// same limits argument by argument first (`HubArgumentLimits`), with friendlier errors.
enum WriteIntentLimits {
    /// The most bytes of a write's path, query included.
    static let path = 8 << 10
    /// The most bytes of a write's canonical JSON body (the Hub's limit is 1 MB).
    static let body = 1 << 20

    /// Checks the path (size, then segments) of `intent`.
    /// - Throws: `ScriptStructuredError` `request_too_large` or `invalid_path`.
    static func check(_ intent: WriteIntent) throws {
        let bytes = intent.path.utf8.count
        guard bytes <= path else {
            throw ScriptStructuredError(code: "request_too_large", message:
                "cannot send \(intent.method) \(shown(intent.path)): the path is \(bytes) bytes; the most is \(path). Nothing was sent or journalled.")
        }
        let pathOnly = intent.path.split(separator: "?", maxSplits: 1, omittingEmptySubsequences: false)[0]
        let segments = pathOnly.split(separator: "/", omittingEmptySubsequences: false).dropFirst()
        guard pathOnly.hasPrefix("/"), !segments.contains(where: isInvalidSegment) else {
            throw ScriptStructuredError(code: "invalid_path", message:
                "cannot send \(intent.method) \(shown(intent.path)): a path is '/' and segments that are not empty, '.' or '..'. Nothing was sent or journalled.")
        }
    }

    /// Checks the size of the canonical body `canonical` of `intent`.
    static func checkBody(_ canonical: String, of intent: WriteIntent) throws {
        let bytes = canonical.utf8.count
        guard bytes <= body else {
            throw ScriptStructuredError(code: "request_too_large", message:
                "cannot send \(intent.method) \(shown(intent.path)): the body is \(bytes) bytes of JSON; the most is \(body). Nothing was sent or journalled.")
        }
    }

    /// Empty, `.` and `..`, also percent-encoded (`%2e`).
    private static func isInvalidSegment(_ segment: Substring) -> Bool {
        let decoded = segment.lowercased().replacingOccurrences(of: "%2e", with: ".")
        return decoded.isEmpty || decoded == "." || decoded == ".."
    }

    /// At most 80 characters of `text`, for a message.
    private static func shown(_ text: String) -> String {
        text.utf8.count > 80 ? String(decoding: text.utf8.prefix(80), as: UTF8.self) + "…" : text
    }
}
