import Foundation
import HTTPKit
import SystemText

/// The version hubscript reports in its User-Agent.
public enum HubClientVersion {
    public static let current = "0.1.0"

    /// `Substratal-hubscript/<version> (<os> <os version>)`.
    public static let userAgent: String = {
        let v = ProcessInfo.processInfo.operatingSystemVersion
        #if os(Linux)
        let os = "Linux"
        #elseif os(macOS)
        let os = "macOS"
        #else
        let os = "Unknown"
        #endif
        return "Substratal-hubscript/\(current) (\(os) \(v.majorVersion).\(v.minorVersion).\(v.patchVersion))"
    }()
}

/// Settings of one `HubClient`. Defaults follow the Hub's client rules (docs/hub-api.md,
/// "Client rules").
public struct HubClientOptions: Sendable {
    /// Path prefix before every path (`/v1` on older deployments); empty for none.
    public var apiPrefix: String
    /// The most requests a minute the client sends (the profile's
    /// `rate_limit_per_minute`); it also paces under any lower limit the Hub reports in
    /// `RateLimit-*` headers. nil: no limit of its own, only the Hub's (none reported:
    /// no pacing). 0 turns pacing off.
    public var rateLimitPerMinute: Int?
    public var retry: RetryPolicy
    public var timeouts: HubTimeouts
    public var clock: any HubClock
    public var random: any HubRandomSource
    /// Where one-time warnings go (deprecation, a feature turned off).
    public var warn: @Sendable (String) -> Void
    /// Told about every answer, retry and rate-limit wait (see `HubClientEvent`); must
    /// return quickly. nil: nobody listens.
    public var observe: (@Sendable (HubClientEvent) -> Void)? = nil
    /// The profile name, used in messages such as "run `hubscript login --profile P`".
    public var profileName: String
    /// For an API key credential: the permissions the profile declares the key holds.
    /// nil means "not declared"; see `HubClient.capabilities()`.
    public var apiKeyPermissions: [String]?
    /// For an API key credential: the key's id (`key_…`), so `capabilities()` can read
    /// the key's permissions from `GET /api-keys/{id}` when the key may.
    public var apiKeyID: String?
    /// For an API key whose permissions are known neither from its record nor from a
    /// declaration: true assumes every permission and leaves the Hub's 403s as the only
    /// gate (the profile's `gate = "hub"`, an explicit choice); false (the default) keeps
    /// them unknown, and a recipe that writes does not start (`HubGate`).
    public var hubIsOnlyGate = false
    /// Reads an API key's record (`GET /api-keys/{id}`) with another credential, a user
    /// session (the profile's `api_key_record_profile`); nil: the key asks for its own.
    public var apiKeyRecordReader: (@Sendable (_ keyID: String) throws -> HubResponse)? = nil

    public init(apiPrefix: String = "", rateLimitPerMinute: Int? = nil, retry: RetryPolicy = RetryPolicy(),
                timeouts: HubTimeouts = HubTimeouts(), clock: any HubClock = SystemHubClock(),
                random: any HubRandomSource = SystemRandomSource(),
                warn: @escaping @Sendable (String) -> Void = HubClientOptions.standardErrorWarn,
                profileName: String = "default", apiKeyPermissions: [String]? = nil, apiKeyID: String? = nil) {
        self.apiPrefix = apiPrefix
        self.rateLimitPerMinute = rateLimitPerMinute
        self.retry = retry
        self.timeouts = timeouts
        self.clock = clock
        self.random = random
        self.warn = warn
        self.profileName = profileName
        self.apiKeyPermissions = apiKeyPermissions
        self.apiKeyID = apiKeyID
    }

    /// Writes `warning: <text>` to standard error.
    public static let standardErrorWarn: @Sendable (String) -> Void = { text in
        StandardError.write("warning: \(text)\n")
    }
}

/// The Hub API client: synchronous, thread-safe, one instance per profile and run.
///
/// Every call goes through one pipeline (see `HubClient+Pipeline.swift`): rate governor,
/// standard headers, auth with single-flight refresh, retries, ETag/If-Match, error
/// decoding, feature gates, deprecation warnings and the unsupported-version stop. The
/// pipeline is the same for every transport.
public final class HubClient: Sendable {
    public let baseURL: URL
    public let options: HubClientOptions
    let transport: any HubTransport
    let credential: HubCredential
    let session: SessionManager?
    let pacer: RatePacer
    let state = ClientLock(ClientState())

    /// Mutable client-wide state.
    struct ClientState {
        var etags: [String: String] = [:]
        var disabledFeatures: Set<String> = []
        var deprecationWarned = false
        var halt: HubError?
        var capabilities: Capabilities?
        var capabilitiesStale = true
    }

    /// Throws `insecure_transport` unless `baseURL` is HTTPS or loopback HTTP.
    public init(baseURL: URL, credential: HubCredential, transport: any HubTransport,
                options: HubClientOptions = HubClientOptions()) throws {
        do {
            try HubTransportPolicy.validate(baseURL)
        } catch let error as HubTransportError {
            throw HubError(code: HubError.Code.insecureTransport, message: error.message)
        }
        self.baseURL = baseURL
        self.options = options
        self.transport = transport
        self.credential = credential
        if case .session(let profile, let store) = credential {
            session = SessionManager(profile: profile, store: store, clock: options.clock)
        } else {
            session = nil
        }
        pacer = RatePacer(limitPerMinute: options.rateLimitPerMinute, clock: options.clock)
    }

    /// Whether `value` is this client's credential: its API key, or its session's stored
    /// refresh token. Lets a caller refuse to hand that credential to anyone else under
    /// another name (a second environment variable, a copied vault entry).
    public func holdsCredential(_ value: String) -> Bool {
        switch credential {
        case .apiKey(let key): return key == value
        case .session(let profile, let store): return (try? store.load(profile: profile))?.refreshToken == value
        case .none: return false
        }
    }

    /// Runs `body` with the API key this client sends, if its credential is one: for a
    /// caller that must mask it in what it shows (the key is never given to a recipe).
    public func withAPIKey(_ body: (String) -> Void) {
        if case .apiKey(let key) = credential { body(key) }
    }

    // MARK: Calls

    /// Sends `request` and returns the 2xx response, or throws `HubError`.
    public func send(_ request: HubRequest) throws -> HubResponse {
        try execute(request, reapply: nil)
    }

    /// Like `send(_:)`, and on `409 version_conflict` refetches the resource (GET on the
    /// same path; for a role assignment, the user's role set), calls `reapply` with the fresh response, and resends with its ETag.
    /// `reapply` returns the body to send now (ignored for DELETE), or nil to give up,
    /// which rethrows the conflict. At most 3 rounds.
    public func send(_ request: HubRequest, reapply: (HubResponse) throws -> HubJSON?) throws -> HubResponse {
        try withoutActuallyEscaping(reapply) { try execute(request, reapply: $0) }
    }

    public func get(_ path: String, query: [(name: String, value: String)] = [], feature: String? = nil) throws -> HubResponse {
        try send(HubRequest(.get, path, query: query, feature: feature))
    }

    public func post(_ path: String, body: HubJSON? = [:], idempotencyKey: String? = nil, feature: String? = nil) throws -> HubResponse {
        try send(HubRequest(.post, path, body: body, idempotencyKey: idempotencyKey, feature: feature))
    }

    public func patch(_ path: String, body: HubJSON, ifMatch: String? = nil, idempotencyKey: String? = nil) throws -> HubResponse {
        try send(HubRequest(.patch, path, body: body, idempotencyKey: idempotencyKey, ifMatch: ifMatch))
    }

    /// PATCH with version-conflict reapply; see `send(_:reapply:)`.
    public func patch(_ path: String, body: HubJSON, ifMatch: String? = nil, idempotencyKey: String? = nil,
                      reapply: (HubResponse) throws -> HubJSON?) throws -> HubResponse {
        try send(HubRequest(.patch, path, body: body, idempotencyKey: idempotencyKey, ifMatch: ifMatch), reapply: reapply)
    }

    public func delete(_ path: String, ifMatch: String? = nil, idempotencyKey: String? = nil) throws -> HubResponse {
        try send(HubRequest(.delete, path, idempotencyKey: idempotencyKey, ifMatch: ifMatch))
    }

    /// A lazy sequence over every item of a list endpoint; see `HubPageSequence`.
    public func paginate(path: String, query: [(name: String, value: String)] = [], limit: Int = 100,
                         feature: String? = nil) -> HubPageSequence {
        HubPageSequence(client: self, path: path, query: query, limit: limit, feature: feature)
    }

    // MARK: State

    /// The ETag cached for `path` (from the last single-resource response for it).
    public func etag(for path: String) -> String? {
        cachedETag(for: HubRequest(.get, path))
    }

    /// False once a 404/501 from an endpoint gated by `feature` turned it off.
    public func isFeatureEnabled(_ feature: String) -> Bool {
        state.withLock { !$0.disabledFeatures.contains(feature) }
    }

    /// The error that stopped all traffic (`unsupported_api_version`), if any.
    public var haltError: HubError? { state.withLock { $0.halt } }
}
