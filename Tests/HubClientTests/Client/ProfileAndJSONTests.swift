import Foundation
import Testing
@testable import HubClient

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
        #expect(profile.rateLimitPerMinute == nil)   // no limit of its own: what the Hub reports
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
        #expect(err?.message == "Profile jobs reads its API key from $HUB_KEY, which is not set")
        // Set but empty (an unfilled CI secret): said as it is, never sent as an empty bearer.
        let empty = hubError {
            try HubClient(profile: profile, credentialStore: InMemoryCredentialStore(), transport: InProcessTransport(handler: hub.handle),
                          environment: ["HUB_KEY": ""])
        }
        #expect(empty?.code == HubError.Code.configuration)
        #expect(empty?.message == "Profile jobs reads its API key from $HUB_KEY, which is empty")
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

    @Test("the parser handles escapes, surrogate pairs, numbers and whitespace")
    func parser() throws {
        let text = #" { "s" : "a\"b\\c\/d\n\t\u00e9\ud83d\ude00", "n": [0, -1.5e3, 2E-2, 12345678901234], "e": {}, "z": [ ] } "#
        let value = try HubJSON.parse(Data(text.utf8))
        #expect(value["s"] == .string("a\"b\\c/d\n\té😀"))
        #expect(value["n"] == [0, -1500, 0.02, 12345678901234])
        #expect(value["e"] == .object([:]))
        #expect(value["z"] == .array([]))
        #expect(try HubJSON.parse(value.encoded()) == value)
        #expect(HubJSON.string("tab\t \u{01} é").jsonText == #""tab\t \u0001 é""#)
    }

    @Test("malformed JSON is refused with the offset", arguments: ["", "{", "[1,]", "{\"a\" 1}", "01", "1.", "\"\\x\"", "tru", "[1] 2",
                                                                   "\"\\ud800\"", "\"a\nb\"", "-", "{\"a\":}"])
    func malformed(text: String) {
        #expect(throws: HubJSONSyntaxError.self) { try HubJSON.parse(Data(text.utf8)) }
    }

    @Test("nesting is capped")
    func depth() {
        let deep = String(repeating: "[", count: 600) + String(repeating: "]", count: 600)
        #expect(throws: HubJSONSyntaxError.self) { try HubJSON.parse(Data(deep.utf8)) }
        let fine = String(repeating: "[", count: 100) + String(repeating: "]", count: 100)
        #expect((try? HubJSON.parse(Data(fine.utf8))) != nil)
    }
}
