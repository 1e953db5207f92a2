import Foundation
import HTTPKit
import HubSandbox
import XCTest
@testable import HubClient

/// The state directory, and `HubConnection` on the built-in sandbox profile, which it
/// reaches only through the `EmbeddedHubOpener` it is given (the CLI's is
/// `EmbeddedSandbox`; here a sandbox file in the state directory, counting its openings).
final class ConnectionTests: XCTestCase {
    /// A state directory in a temporary folder removed after the test.
    func temporaryState() -> StateDirectory {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-connection-\(UUID().uuidString)")
        addTeardownBlock { try? FileManager.default.removeItem(at: folder) }
        return StateDirectory(explicit: folder.appendingPathComponent("state").path)
    }

    /// Opens the sandbox stored in the state directory on the transport's first request.
    final class FileSandboxOpener: EmbeddedHubOpener {
        let apiKeyID = SandboxFixtures.jobsKeyId
        let apiKeySecret = SandboxFixtures.jobsKeySecret
        let openings = ClientLock(0)

        func transport(state: StateDirectory) -> any HubTransport {
            let hub = ClientLock<HubSandbox?>(nil)
            let openings = self.openings
            return InProcessTransport { request in
                let sandbox = hub.withLock { opened in
                    if opened == nil {
                        openings.withLock { $0 += 1 }
                        opened = try? HubSandbox(options: SandboxOptions(storage: .file(try! state.sandboxFile), rateLimits: .off))
                    }
                    return opened!
                }
                return sandbox.handle(request)
            }
        }
    }

    func testStateDirectoryOrderAndPermissions() throws {
        XCTAssertEqual(StateDirectory(explicit: "/x/y", environment: ["XDG_STATE_HOME": "/s"]).url.path, "/x/y")
        XCTAssertEqual(StateDirectory(environment: ["XDG_STATE_HOME": "/s", "HOME": "/h"]).url.path, "/s/hubscript")
        XCTAssertEqual(StateDirectory(environment: ["HOME": "/h"]).url.path, "/h/.local/state/hubscript")
        let state = temporaryState()
        let journal = try state.journalFile
        let attributes = try FileManager.default.attributesOfItem(atPath: journal.deletingLastPathComponent().path)
        XCTAssertEqual((attributes[.posixPermissions] as? NSNumber)?.intValue, 0o700)
    }

    func testBuiltinSandboxConnectionWorksAndPersists() throws {
        let state = temporaryState()
        let opener = FileSandboxOpener()
        let connection = try HubConnection.open(config: .empty, profile: nil, state: state, embeddedHub: opener, warn: { _ in })
        XCTAssertEqual(connection.profileName, "sandbox")
        XCTAssertEqual(connection.notice, "hubscript: no configuration found; using the built-in sandbox Hub (\(try state.sandboxFile.path)). See README, \"Profiles\".")
        XCTAssertEqual(opener.openings.withLock { $0 }, 0, "the sandbox opens on the first request, not before")
        let ada = try connection.client.get("/users/usr_ada").json
        XCTAssertEqual(ada["email"]?.stringValue, "ada@example.com")
        _ = try connection.client.post("/users/usr_ada/suspend", body: ["reason": "test"], idempotencyKey: "config-test")
        XCTAssertEqual(opener.openings.withLock { $0 }, 1)
        let again = try HubConnection.open(config: .empty, profile: nil, state: state, embeddedHub: FileSandboxOpener(), warn: { _ in })
        XCTAssertEqual(try again.client.get("/users/usr_ada").json["status"]?.stringValue, "suspended")
    }

    func testASandboxProfileFromAFileHasNoNotice() throws {
        let state = temporaryState()
        let config = HubConfig(source: state.url.appendingPathComponent("config.lua"), defaultProfile: nil, profiles: ["dev": .sandbox])
        let connection = try HubConnection.open(config: config, profile: nil, state: state, embeddedHub: FileSandboxOpener(),
                                                warn: { _ in })
        XCTAssertEqual(connection.profileName, "dev")
        XCTAssertNil(connection.notice)
    }
}
