import Foundation
import HTTPKit
import JSONKit

/// The HTTP methods the Hub uses.
public enum HubMethod: String, Sendable, Equatable {
    case get = "GET", post = "POST", patch = "PATCH", put = "PUT", delete = "DELETE"

    /// Reads are retried freely; writes only when they carry an Idempotency-Key.
    public var isRead: Bool { self == .get }
}

/// One logical call to the Hub. The client adds the standard headers, auth, retries
/// and If-Match; the request only says what to do.
public struct HubRequest: Sendable {
    public var method: HubMethod
    /// The path below the Hub URL and api_prefix, e.g. `/users/me`. The client encodes
    /// what a segment may not hold; a `%XX` escape is sent as it is, so a variable segment
    /// that may contain `/`, `%` or `?` is escaped by its caller first (the `hub` bindings
    /// use `segment(_:)`): then it is encoded exactly once.
    public var path: String
    /// Query parameters in order; a name may repeat.
    public var query: [(name: String, value: String)]
    /// The JSON body, or nil for none. Setting it writes its canonical bytes (`payload`).
    public var body: HubJSON? {
        get { payload?.value }
        set { payload = newValue.map(CanonicalJSON.init) }
    }
    /// The body and its canonical bytes, which are sent as they are (a write passes the
    /// bytes its idempotency key was derived from, written once).
    public var payload: CanonicalJSON?
    /// Sent as `Idempotency-Key`; makes a write safe to retry.
    public var idempotencyKey: String?
    /// Sent as `If-Match`; when nil on a PATCH/DELETE of a user, entitlement, role or
    /// settings resource, the client sends the ETag it cached for the path, if any.
    public var ifMatch: String?
    /// The feature flag that gates this endpoint (e.g. `notifications`). A `501` turns the
    /// feature off for the client's lifetime (docs/hub-api.md, "Client rules"), and so does
    /// a `404` on a path that names no resource id (a list or create call: "this Hub has no
    /// such endpoint"); a 404 on `/webhooks/whk_x` only means that webhook is gone. Once
    /// off, the client fails the feature's requests with `feature_disabled` without sending
    /// them.
    public var feature: String?
    /// Whether to send the credential. Login and refresh calls do not.
    public var authenticated: Bool
    /// Extra headers, added after the standard ones.
    public var headers: HTTPHeaders
    /// Whether the client parses a 2xx body into `HubResponse.json`. False leaves `json`
    /// `.null` and the body unchecked, for a caller that reads the raw `body` itself
    /// (list pages bound for an export). Error bodies are always parsed.
    public var decodesBody = true
    /// Credentials the request carries in its body (a refresh token, a password): masked
    /// in the answer, in their common encodings, as the `Authorization` header's token is,
    /// so a server that echoes the request hands none of them back.
    public var carriedSecrets: [String] = []

    public init(_ method: HubMethod, _ path: String, query: [(name: String, value: String)] = [],
                body: HubJSON? = nil, idempotencyKey: String? = nil, ifMatch: String? = nil,
                feature: String? = nil, authenticated: Bool = true, headers: HTTPHeaders = [:]) {
        self.init(method, path, query: query, payload: body.map(CanonicalJSON.init), idempotencyKey: idempotencyKey,
                  ifMatch: ifMatch, feature: feature, authenticated: authenticated, headers: headers)
    }

    /// A request whose body is already written (`payload`).
    public init(_ method: HubMethod, _ path: String, query: [(name: String, value: String)] = [],
                payload: CanonicalJSON?, idempotencyKey: String? = nil, ifMatch: String? = nil,
                feature: String? = nil, authenticated: Bool = true, headers: HTTPHeaders = [:]) {
        self.method = method
        self.path = path
        self.query = query
        self.payload = payload
        self.idempotencyKey = idempotencyKey
        self.ifMatch = ifMatch
        self.feature = feature
        self.authenticated = authenticated
        self.headers = headers
    }

    /// Whether a path segment is a resource id (`whk_…`, `usr_…`: letters, `_`, more).
    var namesResource: Bool {
        path.split(separator: "/").contains { segment in
            guard let underscore = segment.firstIndex(of: "_"), underscore > segment.startIndex else { return false }
            return segment[..<underscore].allSatisfy { $0.isLetter && $0.isLowercase } && segment.index(after: underscore) < segment.endIndex
        }
    }

    /// Whether the client may resend this request after an unknown outcome.
    var isRetryable: Bool { method.isRead || idempotencyKey != nil }

    /// Whether the client fills in `If-Match` from its cache: PATCH/DELETE of
    /// `/users/{id}`, `/entitlements/{id}`, `/roles/{id}` and any `…/settings` resource,
    /// and POST/DELETE of a role assignment `/users/{id}/roles/{roleId}` (checked
    /// against the user's role set, whose ETag `GET /users/{id}/roles` returns).
    var takesIfMatch: Bool {
        if isRoleAssignment { return method == .post || method == .delete }
        guard method == .patch || method == .delete else { return false }
        let segments = path.split(separator: "/")
        if segments.last == "settings" { return true }
        return segments.count == 2 && ["users", "entitlements", "roles"].contains(segments[0])
    }

    /// `/users/{id}/roles/{roleId}`.
    var isRoleAssignment: Bool {
        let segments = path.utf8.split(separator: UInt8(ascii: "/"))
        return segments.count == 4 && segments[0].elementsEqual("users".utf8) && segments[2].elementsEqual("roles".utf8)
    }

    /// The resource whose ETag this request reads or changes, and which a version
    /// conflict refetches: the role set for a role assignment, else the path itself.
    var etagPath: String {
        guard isRoleAssignment else { return path }
        return "/" + path.split(separator: "/").prefix(3).joined(separator: "/")
    }

    /// The request target (path plus query), percent-encoded, below `prefix`.
    ///
    /// Each path segment keeps ASCII letters, digits, `-._~!$&'()*+,=:@` and `%XX`
    /// escapes, and encodes every other byte of its UTF-8 as `%XX` (so `?`, `#`, `;` and a
    /// `%` that starts no escape are encoded); query names and values keep letters,
    /// digits and `-._~!$'()*,:@` and encode everything else, `%` included.
    func target(prefix: String) -> String {
        var target = [UInt8]()
        target.reserveCapacity(path.utf8.count + 64)
        target.append(contentsOf: HubRequest.normalizedPrefix(prefix).utf8)
        if path.utf8.first != UInt8(ascii: "/") { target.append(UInt8(ascii: "/")) }
        let pathBytes = Array(path.utf8)
        for (i, byte) in pathBytes.enumerated() {
            if byte == UInt8(ascii: "/") || (byte == UInt8(ascii: "%") && Self.startsEscape(pathBytes, at: i)) {
                target.append(byte)
            } else {
                Self.append(byte, to: &target, keeping: Self.pathKeeps)
            }
        }
        for (n, item) in query.enumerated() {
            target.append(n == 0 ? UInt8(ascii: "?") : UInt8(ascii: "&"))
            for byte in item.name.utf8 { Self.append(byte, to: &target, keeping: Self.queryKeeps) }
            target.append(UInt8(ascii: "="))
            for byte in item.value.utf8 { Self.append(byte, to: &target, keeping: Self.queryKeeps) }
        }
        return String(decoding: target, as: UTF8.self)
    }

    /// Whether `bytes[i]` (a `%`) is followed by two hex digits.
    private static func startsEscape(_ bytes: [UInt8], at i: Int) -> Bool {
        func isHex(_ b: UInt8) -> Bool { (b >= 0x30 && b <= 0x39) || (b | 0x20 >= 0x61 && b | 0x20 <= 0x66) }
        return i + 2 < bytes.count && isHex(bytes[i + 1]) && isHex(bytes[i + 2])
    }

    private static func append(_ byte: UInt8, to out: inout [UInt8], keeping keeps: [Bool]) {
        if keeps[Int(byte)] {
            out.append(byte)
        } else {
            out.append(contentsOf: [UInt8(ascii: "%"), hex[Int(byte >> 4)], hex[Int(byte & 15)]])
        }
    }

    private static func table(_ extra: String) -> [Bool] {
        let keep = Set("ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~".utf8).union(extra.utf8)
        return (0..<256).map { keep.contains(UInt8($0)) }
    }

    private static let hex = Array("0123456789ABCDEF".utf8)
    private static let pathKeeps = table("!$&'()*+,=:@")
    private static let queryKeeps = table("!$'()*,:@")

    /// `/v1/` → `/v1`, `v1` → `/v1`, `""` and `/` → `""`.
    static func normalizedPrefix(_ prefix: String) -> String {
        let trimmed = prefix.trimmingCharacters(in: CharacterSet(charactersIn: "/"))
        return trimmed.isEmpty ? "" : "/" + trimmed
    }
}

/// A successful answer from the Hub.
public struct HubResponse: Sendable {
    public var status: Int
    public var headers: HTTPHeaders
    /// The raw body.
    public var body: Data
    /// The decoded body; `.null` for an empty body (204).
    public var json: HubJSON
    /// The `ETag` header, present on single-resource responses.
    public var etag: String? { headers["ETag"] }
    /// The request id the Hub echoed (or the one the client sent).
    public var requestID: String
    /// True when the Hub answered from its idempotency store (`Idempotent-Replayed: true`).
    public var replayed: Bool { headers["Idempotent-Replayed"]?.lowercased() == "true" }

    public init(status: Int, headers: HTTPHeaders, body: Data, json: HubJSON, requestID: String) {
        self.status = status
        self.headers = headers
        self.body = body
        self.json = json
        self.requestID = requestID
    }
}
