import Foundation
import XCTest
import SystemText

final class PathStatusTests: XCTestCase {
    func testExistsFollowsLinksLikeFileManager() throws {
        let folder = FileManager.default.temporaryDirectory.appendingPathComponent("pathstatus-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: folder) }
        let file = folder.appendingPathComponent("f").path
        try Data("x".utf8).write(to: URL(fileURLWithPath: file))
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("good").path, withDestinationPath: file)
        try FileManager.default.createSymbolicLink(atPath: folder.appendingPathComponent("broken").path, withDestinationPath: folder.appendingPathComponent("none").path)
        for name in ["f", "good", "broken", "none", ""] {
            let path = name.isEmpty ? folder.path : folder.appendingPathComponent(name).path
            XCTAssertEqual(PathStatus.exists(path), FileManager.default.fileExists(atPath: path), name)
        }
        XCTAssertTrue(PathStatus.exists(file))
        XCTAssertFalse(PathStatus.exists(folder.appendingPathComponent("broken").path))
    }
}
