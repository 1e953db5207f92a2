import Foundation
import Testing
@testable import HubClient

@Suite("File credential store")
struct CredentialStoreTests {
    static func tempDir() -> URL {
        FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-cred-\(UUID().uuidString)/credentials")
    }

    static func mode(_ path: String) throws -> Int {
        (try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? NSNumber)?.intValue ?? -1
    }

    @Test("saves with 0600 in a 0700 directory, atomically, and wipes")
    func roundTrip() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let store = FileCredentialStore(directory: dir)
        #expect(try store.load(profile: "prod") == nil)
        try store.save(StoredSession(refreshToken: "rt_1", email: "a@example.com"), profile: "prod")
        try store.save(StoredSession(refreshToken: "rt_2", email: "a@example.com"), profile: "prod")
        #expect(try store.load(profile: "prod")?.refreshToken == "rt_2")
        let file = store.fileURL(profile: "prod").path
        #expect(try Self.mode(file) == 0o600)
        #expect(try Self.mode(dir.path) == 0o700)
        // No temporary files are left behind.
        #expect(try FileManager.default.contentsOfDirectory(atPath: dir.path) == ["prod.json"])
        try store.wipe(profile: "prod")
        #expect(try store.load(profile: "prod") == nil)
        try store.wipe(profile: "prod")
    }

    @Test("profile names cannot escape the directory")
    func safeNames() {
        let store = FileCredentialStore(directory: URL(fileURLWithPath: "/tmp/x"))
        #expect(store.fileURL(profile: "../../etc/passwd").path == "/tmp/x/______etc_passwd.json")
    }

    @Test("a session client refreshes through a file store and leaves the rotated token on disk")
    func withClient() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let store = FileCredentialStore(directory: dir)
        try store.save(StoredSession(refreshToken: "rt_0"), profile: "test")
        let auth = FakeAuthHub(store: store)
        let h = try Harness(.inProcess, credential: .session(profile: "test", store: store)) { auth.handle($0, $1) }
        _ = try h.client.get("/users/me")
        #expect(try FileCredentialStore(directory: dir).load(profile: "test")?.refreshToken == "rt_1")
        #expect(auth.authorizedSeen.first?.stored == "rt_1")
    }
}
