import Foundation
import XCTest
@testable import HubClient

/// A profile's API key from a named secret (`api_key_ref`) through `HubSecretLookup`,
/// the plain-key hint, and the credential store a caller hands in.
final class ProfileSecretTests: XCTestCase {
    var folder: URL!

    override func setUp() {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-profile-secrets-\(UUID().uuidString)")
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    struct Lookup: HubSecretLookup {
        let values: [String: String]
        func secret(named name: String) throws -> String {
            guard let value = values[name] else { throw HubError(code: "secret_not_found", message: "no entry '\(name)'", hint: "Add it.") }
            return value
        }
    }

    func config(_ auth: HubProfile.Auth) -> HubConfig {
        HubConfig(source: nil, defaultProfile: "p", profiles: [
            "p": .hub(HubProfile(name: "p", hubURL: URL(string: "https://hub.example.com")!, auth: auth)),
        ])
    }

    func open(_ auth: HubProfile.Auth, secrets: (any HubSecretLookup)? = nil,
              store: (any CredentialStore)? = nil) throws -> HubConnection {
        let state = StateDirectory(explicit: folder.path)
        return try HubConnection.open(config: config(auth), profile: nil, state: state, embeddedHub: ConnectionTests.FileSandboxOpener(),
                                      credentialStore: store, secrets: secrets, warn: { _ in })
    }

    func testAReferenceIsReadThroughTheLookupAndGetsNoHint() throws {
        let connection = try open(.apiKey(.reference("hub/p")), secrets: Lookup(values: ["hub/p": "satk_live_x"]))
        XCTAssertNil(connection.hint)
        XCTAssertThrowsError(try open(.apiKey(.reference("hub/q")), secrets: Lookup(values: [:]))) { error in
            XCTAssertEqual("\(error)", "secret_not_found: Profile p reads its API key from the vault entry 'hub/q': no entry 'hub/q'. Add it.")
        }
        XCTAssertThrowsError(try open(.apiKey(.reference("hub/q")))) { error in
            XCTAssertEqual((error as? HubError)?.code, HubError.Code.configuration)
        }
    }

    func testPlainKeysGetTheHint() throws {
        XCTAssertEqual(try open(.apiKey(.literal("satk_test_x"))).hint, HubConnection.plainKeyHint(profile: "p"))
        XCTAssertNil(try open(.session(email: "me@example.com"), store: InMemoryCredentialStore()).hint)
    }

    func testTheReferenceSurvivesCodable() throws {
        let auth = HubProfile.Auth.apiKey(.reference("hub/p"))
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys]
        let data = try encoder.encode(auth)
        XCTAssertEqual(String(decoding: data, as: UTF8.self), #"{"kind":"api_key","secret_ref":"hub\/p"}"#)
        XCTAssertEqual(try JSONDecoder().decode(HubProfile.Auth.self, from: data), auth)
    }
}
