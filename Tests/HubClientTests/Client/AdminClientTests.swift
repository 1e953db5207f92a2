import Foundation
import HTTPKit
import HubSandbox
import Testing
@testable import HubClient

/// The admin endpoints through the client, against the sandbox over both transports.
@Suite("Admin endpoints through the client")
struct AdminClientTests {
    @Test("createAPIKey splits the secret off the record; it works, and shows nowhere", arguments: TransportKind.allCases)
    func createKey(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let admin = try h.sessionClient(SandboxFixtures.adminEmail)
        let issued = try admin.createAPIKey(["name": "ci", "scope": "platform", "permissions": ["users.list"], "mode": "test"],
                                            idempotencyKey: "create-ci")
        #expect(issued.record["secret"] == nil)
        #expect(issued.record["name"]?.stringValue == "ci")
        #expect(!issued.replayed)
        let text = issued.secret.withValue { $0 }
        #expect(text.hasPrefix("satk_test_"))
        #expect("\(issued.secret)" == "<secret withheld>")
        var dumped = ""
        dump(issued, to: &dumped)
        #expect(!dumped.contains(text))
        #expect(!String(describing: issued).contains(text))
        let asKey = try h.client(.apiKey(text))
        #expect(try asKey.get("/users/\(SandboxFixtures.adaId)").json["id"]?.stringValue == SandboxFixtures.adaId)
        // The same key again: the Hub's stored answer, the same secret.
        let again = try admin.createAPIKey(["name": "ci", "scope": "platform", "permissions": ["users.list"], "mode": "test"],
                                           idempotencyKey: "create-ci")
        #expect(again.replayed)
        #expect(again.secret.withValue { $0 } == text)
    }

    @Test("rotateAPIKey: the old secret dies at once", arguments: TransportKind.allCases)
    func rotate(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let admin = try h.sessionClient(SandboxFixtures.adminEmail)
        let first = try admin.createAPIKey(["name": "r", "scope": "platform", "permissions": [], "mode": "live"])
        let id = try #require(first.record["id"]?.stringValue)
        let rotated = try admin.rotateAPIKey(id: id)
        #expect(rotated.record["id"]?.stringValue == id)
        let old = try h.client(.apiKey(first.secret.withValue { $0 }))
        #expect(hubError { try old.get("/permissions") }?.code == "unauthenticated")
        let new = try h.client(.apiKey(rotated.secret.withValue { $0 }))
        #expect(try new.get("/permissions").status == 200)
    }

    @Test("an API key cannot manage keys: user_token_required", arguments: TransportKind.allCases)
    func keyCaller(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let jobs = try h.jobsClient()
        let err = hubError { try jobs.createAPIKey(["name": "x", "scope": "platform", "permissions": [], "mode": "test"]) }
        #expect(err?.code == "user_token_required")
        #expect(err?.status == 400)
    }

    @Test("user lifecycle: create (user-creation class), invitation 202, delete 204, then not_found", arguments: TransportKind.allCases)
    func users(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let jobs = try h.jobsClient()
        #expect(RateClass.of(method: "POST", path: "/users") == .userCreation)
        #expect(RateClass.of(method: "POST", path: "/organizations/org_acme/entitlements") == .grant)
        let created = try jobs.post("/users", body: ["email": "new@example.com"], idempotencyKey: "u1")
        #expect(created.status == 201)
        let id = try #require(created.json["id"]?.stringValue)
        let invited = try jobs.post("/users/\(id)/invitation")
        #expect(invited.status == 202)
        #expect(invited.json == .null)
        let taken = hubError { try jobs.post("/users", body: ["email": "new@example.com"]) }
        #expect(taken?.code == "email_taken")
        #expect(taken?.details?["existing_user_id"]?.stringValue == id)
        #expect(try jobs.delete("/users/\(id)").status == 204)
        #expect(hubError { try jobs.get("/users/\(id)") }?.code == "not_found")
    }

    @Test("roles: create, PATCH with the cached ETag, delete; effective permissions", arguments: TransportKind.allCases)
    func roles(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let jobs = try h.jobsClient()
        let role = try jobs.post("/roles", body: ["name": "auditor", "scope": "platform", "permissions": ["audit.view"]])
        #expect(role.json["id"]?.stringValue == "role_platform_auditor")
        #expect(role.etag == "W/\"1\"")
        _ = try jobs.get("/roles/role_platform_auditor")
        let updated = try jobs.patch("/roles/role_platform_auditor", body: ["description": "reads the log"])
        #expect(updated.etag == "W/\"2\"")
        #expect(hubError { try jobs.patch("/roles/role_support", body: ["description": "x"]) }?.code == "seed_role_immutable")
        #expect(try jobs.delete("/roles/role_platform_auditor").status == 204)
        let eff = try jobs.get("/users/\(SandboxFixtures.adaId)/apps/app_wiki/effective-permissions").json
        #expect(eff["allowed"]?.boolValue == true)
        #expect(eff["entitlement_status"]?.stringValue == "active")
    }

    @Test("organization grant: key required, seats for members; inbox mark read as the user", arguments: TransportKind.allCases)
    func orgGrantAndInbox(kind: TransportKind) throws {
        let h = try SandboxHarness(kind)
        let jobs = try h.jobsClient()
        #expect(hubError { try jobs.post("/organizations/org_acme/entitlements", body: ["application_id": "app_chat"]) }?.code
                == "idempotency_key_required")
        let grant = try jobs.post("/organizations/org_acme/entitlements",
                                  body: ["application_id": "app_chat", "member_scope": "allowlist", "member_overrides": ["usr_ada"]],
                                  idempotencyKey: "org-chat")
        #expect(grant.status == 201)
        #expect(grant.json["user_id"] == .null)
        #expect(grant.json["included_member_count"]?.intValue == 1)
        let replay = try jobs.post("/organizations/org_acme/entitlements",
                                   body: ["application_id": "app_chat", "member_scope": "allowlist", "member_overrides": ["usr_ada"]],
                                   idempotencyKey: "org-chat")
        #expect(replay.replayed)
        let ada = try h.sessionClient(SandboxFixtures.adaEmail)
        let read = try ada.patch("/users/me/notifications/ntf_ada_signin", body: ["state": "read"])
        #expect(read.json["state"]?.stringValue == "read")
        #expect(hubError { try jobs.patch("/users/me/notifications/ntf_ada_signin", body: ["state": "read"]) }?.code
                == "user_token_required")
    }
}
