import Foundation
import SystemText
import XCTest

final class FileBytesTests: XCTestCase {
    func testReadsAFileWhole() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("filebytes-\(UUID().uuidString)")
        defer { try? FileManager.default.removeItem(at: url) }
        let content = (0..<200_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        try Data(content).write(to: url)
        XCTAssertEqual(try FileBytes.read(url.path), content)
        try Data().write(to: url)
        XCTAssertEqual(try FileBytes.read(url.path), [])
    }

    /// /proc files report a size of 0 and still have content: read to the end, not to the size.
    func testReadsFilesWhoseSizeIsNotKnownInAdvance() throws {
        let status = String(decoding: try FileBytes.read("/proc/self/status"), as: UTF8.self)
        XCTAssertTrue(status.hasPrefix("Name:"), status)
        XCTAssertTrue(status.contains("\nPid:"), status)
    }

    func testFailuresAreThePOSIXErrorsInWords() throws {
        XCTAssertThrowsError(try FileBytes.read("/nonexistent/\(UUID().uuidString)")) { error in
            XCTAssertEqual((error as? POSIXError)?.code, .ENOENT)
            XCTAssertEqual(FileErrorText.reason(error), "No such file or directory")
        }
        let folder = FileManager.default.temporaryDirectory.path
        XCTAssertThrowsError(try FileBytes.read(folder)) { error in
            XCTAssertEqual((error as? POSIXError)?.code, .EISDIR)
            XCTAssertEqual(FileErrorText.reason(error, path: folder), "it is a folder, not a file")
        }
    }
}

final class AbsolutePathTests: XCTestCase {
    static let inputs = ["x", "./x", "x/", "a/./b", "/a//b/", "/a/b/.", "a/../b", "../x", "/", "/..", "/a/../../b",
                         "a/b/../../c", ".", "..", "/tmp/./s/../t/", "with space/é.lua"]

    func testTheSamePathAsURLsPath() {
        for input in Self.inputs {
            XCTAssertEqual(AbsolutePath.of(input), URL(fileURLWithPath: input).path, input)
        }
    }

    /// A relative path with an empty component (`--config conf//c.lua`, the
    /// configuration's path in its messages) keeps it, as `URL`'s path does; before,
    /// `AbsolutePath.of` dropped it (`…/conf/c.lua`, not `…/conf//c.lua`).
    func testARelativePathKeepsItsEmptyComponentsAsURLsPathDoes() {
        let cwd = AbsolutePath.currentDirectory()
        let expected = ["conf//c.lua": cwd + "/conf//c.lua", "x/..//y": cwd + "//y", ".//a": cwd + "//a",
                        "a/.//b": cwd + "/a//b", "a//": cwd + "/a", "a///b/.": cwd + "/a///b"]
        for (input, path) in expected {
            XCTAssertEqual(URL(fileURLWithPath: input).path, path, "URL, \(input)")
            XCTAssertEqual(AbsolutePath.of(input), path, input)
        }
        // `..` after an empty component: `URL` drops only the empty one and names another
        // file (`…/conf/c.lua`); the path names `./c.lua`, as the file system reads it.
        XCTAssertEqual(URL(fileURLWithPath: "conf//../c.lua").path, cwd + "/conf/c.lua")
        XCTAssertEqual(AbsolutePath.of("conf//../c.lua"), cwd + "/c.lua")
        XCTAssertEqual(AbsolutePath.of("a//b/../.."), cwd)
    }

    func testResolvingParentsGivesTheSamePathAsStandardizedFileURL() {
        for input in Self.inputs {
            XCTAssertEqual(AbsolutePath.of(input, resolvingParents: true), URL(fileURLWithPath: input).standardizedFileURL.path,
                           input)
        }
    }
}
