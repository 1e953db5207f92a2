import Foundation
import HubClient
import HTTPKit
import ScriptHost
import SystemText
import Runs

/// Who a profile is at its Hub, read with as few calls as the answer needs: a user
/// session's `/users/me` and Capabilities, or an API key's record (`api_key_id`) and
/// its permissions; with the rate limits and the `Date` the Hub's answers carried.
/// Never holds or shows a secret.
struct HubIdentity: Sendable {
    /// `user` or `api_key`.
    var kind: String
    var id: String?
    var email: String?
    var name: String?
    var owner: String?
    var status: String?
    var roles: [String] = []
    var permissions: [String] = []
    /// Where the permissions come from (`Capabilities.Source`'s raw value).
    var permissionsSource: String
    /// Why an API key's permissions are not known, when they are not.
    var permissionsNote: String?
    /// The `RateLimit-*` headers of the last answer that carried them.
    var rateLimit: RateLimitSeen?
    /// The Hub's clock (its `Date` header) and ours when the answer arrived.
    var hubDate: Date?
    var localDate: Date?

    struct RateLimitSeen: Sendable, Equatable {
        var limit: Int
        var remaining: Int?
        var resetSeconds: Double?
    }

    /// Reads the identity of `connection`'s profile. Throws the client's `HubError` (a
    /// 401, a Hub out of reach) for the caller to read as a `HubReachFailure`.
    static func read(_ connection: HubConnection) throws -> HubIdentity {
        let client = connection.client
        var seen = Seen()
        // A user session answers /users/me; an API key gets 400 user_token_required,
        // which still proves the Hub accepts it (an unknown key gets 401).
        var user: HubJSON?
        do {
            let me = try client.get("/users/me")
            seen.note(me)
            user = me.json
        } catch let error as HubError where error.code == HubError.Code.userTokenRequired {
            user = nil
        }
        let capabilities = try client.capabilities(refresh: true)
        var identity: HubIdentity
        if let user {
            identity = HubIdentity(kind: "user", permissionsSource: capabilities.source.rawValue)
            identity.id = user["id"]?.stringValue
            identity.email = user["email"]?.stringValue
            identity.name = user["display_name"]?.stringValue ?? user["name"]?.stringValue
            identity.status = user["status"]?.stringValue
            identity.roles = capabilities.roleIDs
        } else {
            identity = HubIdentity(kind: "api_key", permissionsSource: capabilities.source.rawValue)
            identity.id = client.options.apiKeyID
            if let id = client.options.apiKeyID, capabilities.source == .apiKeyRecord {
                // The record again, for its name and owner (Capabilities keeps only the permissions).
                if let record = try? client.options.apiKeyRecordReader?(id) ?? client.get("/api-keys/\(id)") {
                    seen.note(record)
                    identity.name = record.json["name"]?.stringValue
                    identity.owner = record.json["owner_user_id"]?.stringValue ?? record.json["owner"]?["id"]?.stringValue
                }
                identity.status = capabilities.keyStatus
            }
            identity.permissionsNote = capabilities.recordUnreadable
        }
        identity.permissions = capabilities.permissions.sorted()
        identity.rateLimit = seen.rateLimit
        identity.hubDate = seen.hubDate
        identity.localDate = seen.localDate
        return identity
    }

    /// What the answers of one reading carried.
    struct Seen {
        var rateLimit: RateLimitSeen?
        var hubDate: Date?
        var localDate: Date?

        mutating func note(_ response: HubResponse) {
            if let limit = response.headers["RateLimit-Limit"].flatMap({ Int($0.trimmingCharacters(in: .whitespaces)) }) {
                rateLimit = RateLimitSeen(limit: limit,
                                          remaining: response.headers["RateLimit-Remaining"].flatMap { Int($0.trimmingCharacters(in: .whitespaces)) },
                                          resetSeconds: response.headers["RateLimit-Reset"].flatMap { Double($0.trimmingCharacters(in: .whitespaces)) })
            }
            if let date = response.headers["Date"].flatMap(HTTPDate.parse) {
                hubDate = date
                localDate = Date()
            }
        }
    }
}
