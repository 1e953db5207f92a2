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

    /// A FIFO nobody writes to is refused at once (opening it used to wait for a writer
    /// forever); a pipe with a writer is read to its end.
    func testAFIFOWithoutAWriterIsRefusedAndOneWithAWriterIsReadWhole() throws {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("filebytes-fifo-\(UUID().uuidString)").path
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        defer { unlink(path) }
        let done = DispatchSemaphore(value: 0)
        nonisolated(unsafe) var outcome: Result<[UInt8], Error>?
        Thread.detachNewThread {
            outcome = Result { try FileBytes.read(path) }
            done.signal()
        }
        XCTAssertEqual(done.wait(timeout: .now() + 30), .success, "reading a FIFO without a writer hung")
        XCTAssertThrowsError(try outcome?.get()) { error in
            XCTAssertEqual(error as? FileBytes.NoWriter, FileBytes.NoWriter())
            XCTAssertEqual(FileErrorText.reason(error, path: path), "it is a FIFO (named pipe) that nothing is writing to")
        }
        // With a writer (as `<(command)` gives): the whole stream.
        var fds: [Int32] = [0, 0]
        XCTAssertEqual(pipe(&fds), 0)
        let writeEnd = fds[1]
        let writer = Thread {
            let bytes = Array("streamed rows\n".utf8)
            _ = bytes.withUnsafeBytes { write(writeEnd, $0.baseAddress, $0.count) }
            close(writeEnd)
        }
        writer.start()
        XCTAssertEqual(String(decoding: try FileBytes.read("/proc/self/fd/\(fds[0])"), as: UTF8.self), "streamed rows\n")
        close(fds[0])
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
