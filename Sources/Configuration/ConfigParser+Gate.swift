import Foundation
import HubClient
import ScriptHost

/// The profile keys that say how an API key's permissions are known before a run:
/// `api_key_permissions`, `api_key_record_profile` and `gate` (README, "Profiles").
extension ConfigParser {
    /// `api_key_permissions = { "users.list", … }`: permission keys of the catalogue (a
    /// misspelt one is refused with a did-you-mean, since it would silently gate
    /// nothing); `{}` declares a key with no permissions. nil when absent.
    func apiKeyPermissions(_ f: [String: ScriptValue], _ name: String) throws -> [String]? {
        guard let value = f["api_key_permissions"] else { return nil }
        let items: [ScriptValue]
        switch value {
        case .array(let list): items = list
        case .object(let fields) where fields.isEmpty: items = []
        default: items = [.nilValue]
        }
        guard items.allSatisfy({ $0.stringValue != nil }) else {
            throw fail("profiles.\(name).api_key_permissions must be a list of permission keys, e.g. { \"users.list\", \"users.manage\" } (hubscript keys show KEY_ID --profile SESSION_PROFILE prints the line)")
        }
        let permissions = items.compactMap(\.stringValue)
        let known = Capabilities.allPermissions
        if let bad = permissions.first(where: { !known.contains($0) }) {
            throw fail("profiles.\(name).api_key_permissions: unknown permission '\(bad)'\(DidYouMean.hint(for: bad, among: known)) (known permissions: \(known.joined(separator: ", ")))")
        }
        return permissions
    }

    /// `api_key_id = "key_…"`: a key id (`key_` and letters, digits, `_` or `-`), since it
    /// becomes a path segment of the request that reads the key's record.
    func apiKeyID(_ f: [String: ScriptValue], _ name: String) throws -> String? {
        guard let value = f["api_key_id"] else { return nil }
        guard let id = value.stringValue, id.hasPrefix("key_"), id.count > 4, id.utf8.count <= 100,
              id.unicodeScalars.allSatisfy({ $0.isASCII && ($0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "_" || $0 == "-") }) else {
            throw fail("profiles.\(name).api_key_id must be an API key id such as \"key_ops\" (key_ and letters, digits, _ or -)")
        }
        return id
    }

    /// `gate = "hub"`: the explicit choice to run with a key whose permissions are not
    /// known, letting the Hub's 403s be the only gate. `gate = "capabilities"` is the
    /// default (a recipe that writes needs the key's permissions known).
    func hubIsOnlyGate(_ f: [String: ScriptValue], _ name: String) throws -> Bool {
        guard let value = f["gate"] else { return false }
        switch value.stringValue {
        case "hub"?: return true
        case "capabilities"?: return false
        default:
            throw fail("profiles.\(name).gate must be \"capabilities\" (the default: a recipe that writes needs the key's permissions known) or \"hub\" (the Hub's 403s are the only gate)")
        }
    }

    /// Each `api_key_record_profile` must name a profile that signs in as a user, to the
    /// same Hub (`hub_url` and `api_prefix`): a key id read on another Hub is another key.
    func checkRecordProfiles(_ profiles: [String: HubConfig.ProfileSetting]) throws {
        for (name, setting) in profiles.sorted(by: { $0.key < $1.key }) {
            guard case .hub(let profile) = setting, let reader = profile.apiKeyRecordProfile else { continue }
            guard case .hub(let readerProfile)? = profiles[reader], case .session = readerProfile.auth else {
                throw fail("profiles.\(name).api_key_record_profile = \"\(reader)\" must name a profile of this file that signs in as a user (email = …); the Hub shows a key's record only to a user session")
            }
            let (hub, readerHub) = (Self.hubAddress(profile), Self.hubAddress(readerProfile))
            guard hub == readerHub else {
                throw fail("profiles.\(name).api_key_record_profile = \"\(reader)\" signs in to \(readerHub), not to this profile's Hub (\(hub)): a key's record is read on the key's own Hub")
            }
        }
    }

    /// The Hub a profile talks to: its `hub_url` (scheme and host in lower case, without
    /// the scheme's default port) and `api_prefix`, without trailing slashes.
    static func hubAddress(_ profile: HubProfile) -> String {
        func trimmed(_ text: String) -> String {
            var text = Substring(text)
            while text.hasSuffix("/") { text = text.dropLast() }
            return String(text)
        }
        var url = profile.hubURL.absoluteString
        if var parts = URLComponents(url: profile.hubURL, resolvingAgainstBaseURL: false) {
            parts.scheme = parts.scheme?.lowercased()
            parts.host = parts.host?.lowercased()
            if (parts.scheme, parts.port) == ("https", 443) || (parts.scheme, parts.port) == ("http", 80) { parts.port = nil }
            url = parts.string ?? url
        }
        let prefix = trimmed(profile.apiPrefix)
        return trimmed(url) + (prefix.isEmpty || prefix.hasPrefix("/") ? prefix : "/" + prefix)
    }
}
