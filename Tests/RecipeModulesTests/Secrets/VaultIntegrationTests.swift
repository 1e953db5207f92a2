import Foundation
import SystemText
import HTTPKit
import HubClient
import ScriptHost
import Vault
import XCTest
import Secrets

/// The vault as the client's credential store and as the source of profiles' API keys
/// (`api_key_ref`).
final class VaultIntegrationTests: VaultTestCase {
    // MARK: api_key_ref

    func testAProfilesAPIKeyRefIsReadFromTheVaultAndMasked() throws {
        try createVault(secrets: ["hub/prod-key": "satk_live_vaultint_0123456789"])
        let profile = HubProfile(name: "prod", hubURL: URL(string: "https://hub.example.com")!, auth: .apiKey(.reference("hub/prod-key")))
        _ = try HubClient(profile: profile, credentialStore: InMemoryCredentialStore(), transport: NoTransport(),
                                   secrets: resolver())
        XCTAssertEqual(SecretRedactor.shared.redact("key satk_live_vaultint_0123456789"), "key <secret hub/prod-key>")
    }

    func testAPIKeyRefErrorsSayWhatToDo() throws {
        let profile = HubProfile(name: "prod", hubURL: URL(string: "https://hub.example.com")!, auth: .apiKey(.reference("hub/prod-key")))
        func failure(_ secrets: (any HubSecretLookup)?) -> String {
            do {
                _ = try HubClient(profile: profile, credentialStore: InMemoryCredentialStore(), transport: NoTransport(), secrets: secrets)
                return "no error"
            } catch { return "\(error)" }
        }
        let hint = #"For CI, api_key_env = "VARIABLE" reads the key from the environment instead."#
        XCTAssertEqual(failure(resolver()), """
            vault_not_open: Profile prod reads its API key from the vault entry 'hub/prod-key': no vault in \(folder.path): \
            create one with `hubscript vault init`, then `hubscript vault set NAME`. \(hint)
            """)
        try createVault()
        XCTAssertEqual(failure(resolver(locked: true)), """
            vault_locked: Profile prod reads its API key from the vault entry 'hub/prod-key': the vault in \(folder.path) is locked: \
            set HUBSCRIPT_VAULT_KEY (or HUBSCRIPT_VAULT_KEY_FILE, or HUBSCRIPT_VAULT_PASSPHRASE). \(hint)
            """)
        XCTAssertEqual(failure(resolver()), """
            secret_not_found: Profile prod reads its API key from the vault entry 'hub/prod-key': no vault entry 'hub/prod-key' in \
            \(folder.path): add it with `hubscript vault set hub/prod-key` (the value is read from stdin). \(hint)
            """)
        XCTAssertTrue(failure(nil).hasPrefix("configuration_error: Profile prod reads its API key from the vault entry 'hub/prod-key', and no vault is available here"),
                      failure(nil))
    }

    func testThePlainKeyHint() {
        XCTAssertEqual(HubConnection.plainKeyHint(profile: "prod"),
                       "hubscript: hint: profile 'prod' has its API key in plain text; store it encrypted with `hubscript vault set hub/prod` and set api_key_ref = \"hub/prod\"")
        XCTAssertFalse(HubProfile.SecretSource.reference("hub/x").isPlain)
        XCTAssertTrue(HubProfile.SecretSource.environment("X").isPlain)
    }

    // MARK: Sessions

    func testSessionsLiveInTheVault() throws {
        try createVault()
        let store = VaultCredentialStore(resolver: resolver())
        XCTAssertNil(try store.load(profile: "me"))
        let session = StoredSession(refreshToken: "srt_vaultint_token_1", email: "me@example.com", savedAt: Date(timeIntervalSince1970: 1_700_000_000))
        try store.save(session, profile: "me")
        XCTAssertEqual(try VaultCredentialStore(resolver: resolver()).load(profile: "me"), session)
        XCTAssertEqual(try Vault.open(at: folder, key: try keySource()).list().map(\.name), ["sessions/me"])
        try store.wipe(profile: "me")
        try store.wipe(profile: "me")
        XCTAssertNil(try VaultCredentialStore(resolver: resolver()).load(profile: "me"))
        XCTAssertEqual(VaultCredentialStore.entryName(profile: "a b/c"), "sessions/a_b_c")
    }

    func testAFileSessionMovesIntoTheVaultAndItsFileIsGone() throws {
        let files = FileCredentialStore(directory: root.appendingPathComponent("credentials"))
        let session = StoredSession(refreshToken: "srt_vaultint_token_2", email: nil, savedAt: Date(timeIntervalSince1970: 1_700_000_000))
        try files.save(session, profile: "me")

        // No vault: the files, with a hint.
        let plain = try SessionStorage.choose(profile: "me", resolver: resolver(), files: files)
        XCTAssertFalse(plain.inVault)
        XCTAssertEqual(plain.notice, "hubscript: hint: the session is kept in \(files.directory.path) (mode 0600); run `hubscript vault init` to keep sessions encrypted in the vault instead")
        XCTAssertEqual(try plain.store.load(profile: "me"), session)

        // A vault, locked: an error, the file untouched.
        try createVault()
        XCTAssertThrowsError(try SessionStorage.choose(profile: "me", resolver: resolver(locked: true), files: files)) { error in
            XCTAssertEqual((error as? HubError)?.code, "vault_locked")
            XCTAssertTrue("\(error)".hasPrefix("vault_locked: Profile me keeps its session in the vault: the vault in \(self.folder.path) is locked"), "\(error)")
        }
        XCTAssertEqual(try files.load(profile: "me"), session)

        // Opened: moved, said once.
        let moved = try SessionStorage.choose(profile: "me", resolver: resolver(), files: files)
        XCTAssertTrue(moved.inVault)
        XCTAssertEqual(moved.notice, "hubscript: moved the stored session of 'me' from \(files.fileURL(profile: "me").path) into the vault (sessions/me) and deleted the file")
        XCTAssertFalse(FileManager.default.fileExists(atPath: files.fileURL(profile: "me").path))
        XCTAssertEqual(try moved.store.load(profile: "me"), session)
        let again = try SessionStorage.choose(profile: "me", resolver: resolver(), files: files)
        XCTAssertNil(again.notice)
        XCTAssertEqual(try again.store.load(profile: "me"), session)
    }
}

/// A transport that is never used (building a client sends nothing).
private struct NoTransport: HubTransport {
    func perform(_ request: HTTPRequestMessage, baseURL: URL, timeouts: HubTimeouts) throws -> HTTPResponseMessage {
        throw HubError(code: "unreachable", message: "no transport in this test")
    }
}
