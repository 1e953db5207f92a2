import Foundation
import HTTPKit
import Testing
@testable import HubClient

/// A key's record gives the profile's permissions only when it is the record of the key
/// the profile sends: `api_key_id` naming another key (a copy-paste slip, or a reader on
/// another Hub) must never lend that key's permissions to the gate.
@Suite("API key record identity")
struct KeyRecordIdentityTests {
    static let opsSecret = "satk_test_ops_sandbox_000000000000000000"

    /// A Hub whose `/api-keys/{id}` answers `record`; everything else `user_token_required`.
    static func hub(_ record: HubJSON) -> ScriptedHub.Script {
        { request, _ in
            request.path.hasPrefix("/api-keys/") ? jsonResponse(record) : errorResponse(400, "user_token_required")
        }
    }

    static let jobsRecord: HubJSON = [
        "id": "key_jobs", "prefix": "satk_test_jobs", "status": "active",
        "permissions": .array(Capabilities.allPermissions.map { .string($0) }),
    ]

    @Test("the record of another key (its prefix does not begin the profile's key): no permissions from it",
          arguments: TransportKind.allCases)
    func anotherKeysRecordGivesNothing(kind: TransportKind) throws {
        let h = try Harness(kind, credential: .apiKey(Self.opsSecret), configure: { $0.apiKeyID = "key_jobs" }, Self.hub(Self.jobsRecord))
        let caps = try h.client.capabilities()
        #expect(caps.source == .apiKeyUnknown)
        #expect(caps.permissions.isEmpty)
        #expect(caps.recordUnreadable == "the record of key_jobs is another key's (its prefix does not begin the key "
            + "this profile sends): api_key_id must name the profile's own key")
        #expect(h.requests.map(\.path) == ["/api-keys/key_jobs"])
    }

    @Test("read by a reader (a user session), the same: the record must be the sent key's", arguments: TransportKind.allCases)
    func anotherKeysRecordReadByAReader(kind: TransportKind) throws {
        let h = try Harness(kind, credential: .apiKey(Self.opsSecret), configure: {
            $0.apiKeyID = "key_jobs"
            $0.apiKeyRecordReader = { _ in
                HubResponse(status: 200, headers: HTTPHeaders(), body: Data(), json: Self.jobsRecord, requestID: "req_1")
            }
        }, Self.hub([:]))
        let caps = try h.client.capabilities()
        #expect(caps.source == .apiKeyUnknown)
        #expect(caps.permissions.isEmpty)
        #expect(caps.recordUnreadable?.hasPrefix("the record of key_jobs is another key's") == true)
    }

    @Test("another key's record with gate = hub or declared permissions: those decide, as for an unread record",
          arguments: TransportKind.allCases)
    func anotherKeysRecordFallsBackToTheProfile(kind: TransportKind) throws {
        let declared = try Harness(kind, credential: .apiKey(Self.opsSecret), configure: {
            $0.apiKeyID = "key_jobs"
            $0.apiKeyPermissions = ["users.list"]
        }, Self.hub(Self.jobsRecord))
        let caps = try declared.client.capabilities()
        #expect(caps.source == .apiKeyDeclared)
        #expect(caps.permissions == ["users.list"])

        let hubGate = try Harness(kind, credential: .apiKey(Self.opsSecret), configure: {
            $0.apiKeyID = "key_jobs"
            $0.hubIsOnlyGate = true
        }, Self.hub(Self.jobsRecord))
        let assumed = try hubGate.client.capabilities()
        #expect(assumed.source == .apiKeyHubGate)
        #expect(assumed.recordUnreadable?.hasPrefix("the record of key_jobs is another key's") == true)
    }

    @Test("the key's own record (its prefix begins the key, or the record shows none): its permissions",
          arguments: TransportKind.allCases)
    func ownRecordGivesItsPermissions(kind: TransportKind) throws {
        for record: HubJSON in [
            ["id": "key_ops", "prefix": "satk_test_ops_", "status": "active", "permissions": ["users.list", "users.manage"]],
            ["id": "key_ops", "permissions": ["users.list", "users.manage"]],
        ] {
            let h = try Harness(kind, credential: .apiKey(Self.opsSecret), configure: { $0.apiKeyID = "key_ops" }, Self.hub(record))
            let caps = try h.client.capabilities()
            #expect(caps.source == .apiKeyRecord)
            #expect(caps.permissions == ["users.list", "users.manage"])
        }
    }

    @Test("a record that says the key is revoked or expired marks it inactive; an active one, or none shown, does not",
          arguments: TransportKind.allCases)
    func recordStatus(kind: TransportKind) throws {
        for (status, inactive) in [("revoked", true), ("expired", true), ("active", false), (nil, false)] as [(String?, Bool)] {
            var record: HubJSON = ["id": "key_ops", "prefix": "satk_test_ops_", "permissions": ["users.list"]]
            if let status { record = ["id": "key_ops", "prefix": "satk_test_ops_", "status": .string(status), "permissions": ["users.list"]] }
            let h = try Harness(kind, credential: .apiKey(Self.opsSecret), configure: { $0.apiKeyID = "key_ops" }, Self.hub(record))
            let caps = try h.client.capabilities()
            #expect(caps.source == .apiKeyRecord)
            #expect(caps.keyID == "key_ops")
            #expect(caps.keyStatus == status)
            #expect(caps.keyInactive == inactive, "\(status ?? "none")")
        }
    }
}
