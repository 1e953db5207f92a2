import Foundation
import XCTest
@testable import HubClient

/// The state directory's path is built as a string; it must be the path its URL names.
final class StateDirectoryTests: XCTestCase {
    func testThePathIsTheURLsPath() {
        let states = [
            StateDirectory(explicit: "state"), StateDirectory(explicit: "./a/../state/"),
            StateDirectory(explicit: "/tmp/s/"), StateDirectory(explicit: "/"),
            StateDirectory(environment: ["XDG_STATE_HOME": "/var/xdg/"]),
            StateDirectory(environment: ["XDG_STATE_HOME": "rel"]),
            StateDirectory(environment: ["HOME": "/home/ada"]),
            StateDirectory(environment: ["HOME": "/"]),
        ]
        for state in states {
            XCTAssertEqual(state.path, state.url.path)
        }
        XCTAssertEqual(StateDirectory(environment: ["HOME": "/home/ada"]).path, "/home/ada/.local/state/hubscript")
        XCTAssertEqual(StateDirectory(environment: ["XDG_STATE_HOME": "/var/xdg/", "HOME": "/h"]).path, "/var/xdg/hubscript")
    }

    func testFoldersAreMadeOnceAndNamedByPath() throws {
        let root = FileManager.default.temporaryDirectory.appendingPathComponent("state-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: root) }
        let state = StateDirectory(explicit: root.path)
        let runs = try state.folderPath("runs")
        XCTAssertEqual(runs, root.path + "/runs")
        var status = stat()
        XCTAssertEqual(stat(runs, &status), 0)
        XCTAssertEqual(status.st_mode & 0o777, 0o700)
        XCTAssertEqual(try state.folder("runs").path, runs)
        XCTAssertEqual(try state.journalFilePath, root.path + "/journal/journal.sqlite")
        XCTAssertEqual(try state.journalFile.path, try state.journalFilePath)
    }
}
