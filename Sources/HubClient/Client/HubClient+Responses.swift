import Foundation
import HTTPKit

extension HubClient {
    /// A transport failure as a `HubError`: `transport_error` (retryable),
    /// `response_too_large` or `insecure_transport`.
    static func transportFailure(_ error: Error, requestID: String) -> HubError {
        guard let transportError = error as? HubTransportError else {
            if let hubError = error as? HubError { return hubError }
            return HubError(code: HubError.Code.transportError, message: String(describing: error), requestID: requestID)
        }
        let details: HubJSON = ["reason": .string(transportError.kind.rawValue)]
        switch transportError.kind {
        case .tooLarge:
            return HubError(code: HubError.Code.responseTooLarge, message: transportError.message, details: details, requestID: requestID)
        case .insecure:
            return HubError(code: HubError.Code.insecureTransport, message: transportError.message, details: details, requestID: requestID)
        case .wrongProtocol:
            return HubError(code: HubError.Code.transportError, message: transportError.message, details: details, requestID: requestID,
                            hint: "Fix the profile's hub_url: http:// for a plain-HTTP loopback server such as `hubscript sandbox serve`, "
                                + "https:// for a TLS one. Nothing reached the Hub.")
        case .untrustedCertificate:
            return HubError(code: HubError.Code.transportError, message: transportError.message, details: details, requestID: requestID,
                            hint: "If the Hub's certificate comes from a private CA, trust it for this profile: ca_file = \"/path/to/ca.pem\" "
                                + "in the profile (or SSL_CERT_FILE for every profile). Nothing reached the Hub.")
        default:
            return HubError(code: HubError.Code.transportError, message: "No response from the Hub: \(transportError.message)",
                            details: details, requestID: requestID)
        }
    }

    /// A 2xx response with its body decoded (unless `decode` is false: then `json` is
    /// `.null`); a body that is not JSON is `invalid_response`.
    static func makeResponse(_ raw: HTTPResponseMessage, requestID: String, decode: Bool = true) throws -> HubResponse {
        let json: HubJSON
        if raw.body.isEmpty || !decode {
            json = .null
        } else {
            do {
                json = try HubJSON.parse(raw.body)
            } catch {
                throw invalidBody(raw, requestID: requestID)
            }
        }
        return HubResponse(status: raw.status, headers: raw.headers, body: raw.body, json: json, requestID: requestID)
    }

    /// Decodes `{"error":{code,message,details}}`; anything else is `invalid_response`.
    static func decodeError(_ raw: HTTPResponseMessage, requestID: String) -> HubError {
        guard let json = try? HubJSON.parse(raw.body), let error = json["error"],
              let code = error["code"]?.stringValue else {
            return invalidBody(raw, requestID: requestID)
        }
        var details = error["details"].flatMap { $0.isNull ? nil : $0 }
        // Field errors come as `details.fields[]` (the public reference) or as a bare
        // `details[]` of `{field, …}` (the client rules; docs/hub-api.md, "Where the
        // sources disagree"): both read as `details.fields`.
        if let items = details?.arrayValue, items.contains(where: { $0["field"] != nil }) {
            details = .object(["fields": .array(items)])
        }
        return HubError(code: code, message: error["message"]?.stringValue ?? code, status: raw.status,
                        details: details, requestID: requestID)
    }

    static func invalidBody(_ raw: HTTPResponseMessage, requestID: String) -> HubError {
        let snippet = String(decoding: raw.body.prefix(120), as: UTF8.self)
        let type = raw.headers["Content-Type"] ?? "no content type"
        return HubError(code: HubError.Code.invalidResponse,
                        message: "HTTP \(raw.status) with a body that is not a Hub JSON answer (\(type)): \(snippet)",
                        status: raw.status, requestID: requestID)
    }

    /// Caches the ETag of a response under the resource it belongs to (`etagPath`) and,
    /// for a returned object, under its `id`; a DELETE without an ETag forgets both.
    /// A POST that creates something is cached by the new `id` only.
    func remember(_ response: HubResponse, for request: HubRequest) {
        state.withLock { s in
            guard let etag = response.etag else {
                if request.method == .delete {
                    s.etags.removeValue(forKey: request.etagPath)
                    if let last = request.path.split(separator: "/").last { s.etags.removeValue(forKey: "id:" + last) }
                }
                return
            }
            if request.method != .post || request.isRoleAssignment { s.etags[request.etagPath] = etag }
            if !request.isRoleAssignment, let id = response.json["id"]?.stringValue { s.etags["id:" + id] = etag }
        }
    }

    /// The cached ETag for `request`: by the resource id in the last path segment,
    /// else by its `etagPath`.
    func cachedETag(for request: HubRequest) -> String? {
        state.withLock { s in
            if !request.isRoleAssignment, let last = request.path.split(separator: "/").last, let byID = s.etags["id:" + last] {
                return byID
            }
            return s.etags[request.etagPath]
        }
    }

    /// One warning per client for `Deprecation` / `Sunset` headers.
    func warnIfDeprecated(_ headers: HTTPHeaders) {
        let deprecation = headers["Deprecation"], sunset = headers["Sunset"]
        guard deprecation != nil || sunset != nil else { return }
        let first = state.withLock { s -> Bool in
            defer { s.deprecationWarned = true }
            return !s.deprecationWarned
        }
        guard first else { return }
        var text = "the Hub marks this API version as deprecated"
        if let deprecation { text += " (Deprecation: \(deprecation))" }
        if let sunset { text += "; it stops working at \(sunset)" }
        options.warn(text + ". Upgrade hubscript before then.")
    }

    /// Turns `feature` off for the client's lifetime (warning once) and returns the
    /// `feature_disabled` error for the call that found out.
    func disable(feature: String, because error: HubError) -> HubError {
        let first = state.withLock { $0.disabledFeatures.insert(feature).inserted }
        if first {
            options.warn("the Hub does not offer '\(feature)' (HTTP \(error.status ?? 0) \(error.code)); calls to it are off for this run.")
        }
        var disabled = Self.featureError(feature)
        disabled.status = error.status
        disabled.requestID = error.requestID
        return disabled
    }

    static func featureError(_ feature: String) -> HubError {
        HubError(code: HubError.Code.featureDisabled, message: "The feature '\(feature)' is not available on this Hub",
                 details: ["feature": .string(feature)])
    }
}
