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

    static let savedAt = Date(timeIntervalSince1970: 1_796_048_553)   // 2026-11-30T14:22:33Z

    @Test("a session is stored as sorted JSON with its time in whole seconds, and without an email member when it has none")
    func storedBytes() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let store = FileCredentialStore(directory: dir)
        try store.save(StoredSession(refreshToken: "rt_1", email: "a@example.com", savedAt: Self.savedAt.addingTimeInterval(0.75)), profile: "prod")
        let file = store.fileURL(profile: "prod").path
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self)
                == #"{"email":"a@example.com","refreshToken":"rt_1","savedAt":"2026-11-30T14:22:33Z"}"#)
        #expect(try store.load(profile: "prod") == StoredSession(refreshToken: "rt_1", email: "a@example.com", savedAt: Self.savedAt))
        try store.save(StoredSession(refreshToken: "rt_2", savedAt: Self.savedAt), profile: "prod")
        #expect(String(decoding: try Data(contentsOf: URL(fileURLWithPath: file)), as: UTF8.self)
                == #"{"refreshToken":"rt_2","savedAt":"2026-11-30T14:22:33Z"}"#)
    }

    @Test("a session file as earlier releases wrote it (escaped slashes, an offset, a null email) still loads")
    func earlierFiles() throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let store = FileCredentialStore(directory: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = store.fileURL(profile: "prod")
        try Data(#"{"email":"a\/b@example.com","refreshToken":"rt_\/1","savedAt":"2026-11-30T14:22:33Z"}"#.utf8).write(to: file)
        #expect(try store.load(profile: "prod") == StoredSession(refreshToken: "rt_/1", email: "a/b@example.com", savedAt: Self.savedAt))
        try Data(#"{"refreshToken":"rt_1","savedAt":"2026-11-30T16:22:33+02:00","email":null}"#.utf8).write(to: file)
        #expect(try store.load(profile: "prod") == StoredSession(refreshToken: "rt_1", savedAt: Self.savedAt))
    }

    @Test("a damaged session file says what is wrong and to log in again", arguments: [
        ("", "invalid JSON at byte 1: unexpected end of input"),
        (#"{"refreshToken":"rt_1","savedAt":"2026-11-30T14:22:33Z""#, "invalid JSON at byte 56: unexpected end of input in an object"),
        (#"{"refresh_token":"rt_1","savedAt":"2026-11-30T14:22:33Z"}"#, "it has no refreshToken string"),
        (#"{"refreshToken":7,"savedAt":"2026-11-30T14:22:33Z"}"#, "it has no refreshToken string"),
        (#"{"refreshToken":"rt_1","savedAt":"yesterday"}"#, "its savedAt is not a time like 2026-12-02T08:10:14Z"),
        (#"{"refreshToken":"rt_1"}"#, "its savedAt is not a time like 2026-12-02T08:10:14Z"),
        (#"{"refreshToken":"rt_1","savedAt":"2026-11-30T14:22:33Z","email":1}"#, "its email is not a string"),
    ])
    func damaged(text: String, why: String) throws {
        let dir = Self.tempDir()
        defer { try? FileManager.default.removeItem(at: dir.deletingLastPathComponent()) }
        let store = FileCredentialStore(directory: dir)
        try FileManager.default.createDirectory(at: dir, withIntermediateDirectories: true)
        let file = store.fileURL(profile: "prod")
        try Data(text.utf8).write(to: file)
        let error = try #require(throws: HubError.self) { try store.load(profile: "prod") }
        #expect(error.code == HubError.Code.configuration)
        #expect(error.message == "The stored session of profile prod (\(file.path)) cannot be read: \(why). Log in again (`hubscript login`) to replace it.")
    }
}
