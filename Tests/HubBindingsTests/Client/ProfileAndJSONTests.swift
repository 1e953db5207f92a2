import Foundation
import Testing
@testable import HubBindings

@Suite("Profiles and JSON values")
struct ProfileAndJSONTests {
    @Test("a profile decodes from snake_case JSON with defaults")
    func decode() throws {
        let text = #"""
        {"name":"prod","hub_url":"https://api.substratalapps.com","auth":{"kind":"api_key","secret_env":"HUB_KEY"},
         "dispatch_url":"https://dispatch.example.com","dispatch_token_ref":"dispatch/ci"}
        """#
        let profile = try JSONDecoder().decode(HubProfile.self, from: Data(text.utf8))
        #expect(profile.name == "prod")
        #expect(profile.apiPrefix == "")
        #expect(profile.rateLimitPerMinute == 100)
        #expect(profile.auth == .apiKey(.environment("HUB_KEY")))
        #expect(profile.dispatchTokenRef == "dispatch/ci")
        let again = try JSONDecoder().decode(HubProfile.self, from: JSONEncoder().encode(profile))
        #expect(again == profile)
        let session = HubProfile(name: "me", hubURL: URL(string: "http://127.0.0.1:8080")!, apiPrefix: "/v1",
                                 auth: .session(email: "admin@example.com"), rateLimitPerMinute: 0)
        #expect(try JSONDecoder().decode(HubProfile.self, from: JSONEncoder().encode(session)) == session)
        #expect(throws: DecodingError.self) {
            _ = try JSONDecoder().decode(HubProfile.self, from: Data(#"{"name":"x","hub_url":"https://h","auth":{"kind":"oauth"}}"#.utf8))
        }
    }

    @Test("a client from a profile takes its prefix, pace and API key from the environment")
    func clientFromProfile() throws {
        let hub = ScriptedHub { _, _ in jsonResponse(["ok": true]) }
        let profile = HubProfile(name: "jobs", hubURL: URL(string: "https://hub.test")!, apiPrefix: "v1",
                                 auth: .apiKey(.environment("HUB_KEY")), rateLimitPerMinute: 30, apiKeyPermissions: ["users.list"])
        let client = try HubClient(profile: profile, credentialStore: InMemoryCredentialStore(),
                                   transport: InProcessTransport(handler: hub.handle), environment: ["HUB_KEY": "satk_test_env"])
        _ = try client.get("/users")
        #expect(hub.requests.first?.path == "/v1/users")
        #expect(hub.requests.first?.headers["Authorization"] == "Bearer satk_test_env")
        #expect(client.options.rateLimitPerMinute == 30)
        #expect(client.options.profileName == "jobs")
        let err = hubError {
            try HubClient(profile: profile, credentialStore: InMemoryCredentialStore(), transport: InProcessTransport(handler: hub.handle),
                          environment: [:])
        }
        #expect(err?.code == HubError.Code.configuration)
        #expect(err?.message.contains("$HUB_KEY") == true)
    }

    @Test("JSON values parse, encode canonically and keep integers integral")
    func json() throws {
        let value = try HubJSON.parse(Data(#"{"b":[1,2.5,true,null,"x"],"a":{"n":-3}}"#.utf8))
        #expect(value["b"]?.arrayValue?.count == 5)
        #expect(value["b"]?.arrayValue?[0].intValue == 1)
        #expect(value["b"]?.arrayValue?[1].doubleValue == 2.5)
        #expect(value["b"]?.arrayValue?[2].boolValue == true)
        #expect(value["b"]?.arrayValue?[3].isNull == true)
        #expect(value.jsonText == #"{"a":{"n":-3},"b":[1,2.5,true,null,"x"]}"#)
        #expect(HubJSON.string("a/b").jsonText == #""a/b""#)
    }
}
