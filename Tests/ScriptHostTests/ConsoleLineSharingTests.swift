import Foundation
import SystemText
import XCTest
import ScriptHost

/// Every human line of `ConsoleOutput` (prints, logs, stderr text) is written inside its
/// terminal line's `clearing`, and `[warn]`/`[error]` are painted when colour is on.
final class ConsoleLineSharingTests: XCTestCase {
    /// Writes `<` before and `>` after each line to the same descriptor as the console.
    final class Marker: TerminalLineSharing, @unchecked Sendable {
        let fd: Int32
        init(fd: Int32) { self.fd = fd }
        func clearing(_ write: () -> Void) {
            _ = Glibc.write(fd, "<", 1)
            write()
            _ = Glibc.write(fd, ">", 1)
        }
    }

    override func tearDown() {
        TerminalStyle.choose(.auto)
        super.tearDown()
    }

    /// What `body` wrote through a console whose stdout and stderr are one pipe.
    func written(json: Bool = false, printsShare: Bool = true, _ body: (ConsoleOutput) -> Void) throws -> String {
        let pipe = Pipe()
        let fd = pipe.fileHandleForWriting.fileDescriptor
        let console = ConsoleOutput(json: json, stdoutFD: fd, stderrFD: fd, terminalLine: Marker(fd: fd),
                                    printsShareTerminalLine: printsShare)
        body(console)
        try pipe.fileHandleForWriting.close()
        return String(decoding: pipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    }

    func testEveryHumanLineIsWrittenInsideClearing() throws {
        let text = try written { console in
            console.printLine("printed")
            "bytes".utf8CString.withUnsafeBytes { console.printLine(bytes: UnsafeRawBufferPointer(rebasing: $0.dropLast())) }
            console.log(.info, "logged", fields: [:])
            console.writeStderr("said\n")
        }
        XCTAssertEqual(text, "<printed\n><bytes\n><[info] logged\n><said\n>")
    }

    func testPrintsToAnotherPlaceThanTheTerminalAreNotClearedAround() throws {
        let text = try written(printsShare: false) { console in
            console.printLine("printed")
            console.log(.info, "logged", fields: [:])
        }
        XCTAssertEqual(text, "printed\n<[info] logged\n>")
    }

    func testJSONLinesGoStraightToStdoutAndStderrTextIsStillCleared() throws {
        let text = try written(json: true) { console in
            console.event("x", [:])
            console.writeStderr("said\n")
        }
        XCTAssertEqual(text, #"{"type":"x"}"# + "\n<said\n>")
    }

    func testWarnAndErrorTagsArePaintedWhenColourIsOn() throws {
        TerminalStyle.choose(.always)
        let painted = try written { console in
            console.log(.warn, "careful", fields: [:])
            console.log(.error, "bad", fields: [:])
            console.log(.info, "fine", fields: [:])
        }
        XCTAssertEqual(painted, "<\u{1B}[33m[warn]\u{1B}[0m careful\n><\u{1B}[1;31m[error]\u{1B}[0m bad\n><[info] fine\n>")
        TerminalStyle.choose(.never)
        let plain = try written { console in console.log(.warn, "careful", fields: [:]) }
        XCTAssertEqual(plain, "<[warn] careful\n>")
    }
}
