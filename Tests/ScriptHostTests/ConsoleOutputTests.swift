import Foundation
import SystemText
import XCTest
import ScriptHost

/// `TerminalText` (the escaper of every human-facing line) and `ConsoleOutput` (lines
/// written as they are made), through pipes standing in for stdout and stderr.
final class ConsoleOutputTests: XCTestCase {
    // MARK: TerminalText

    func testControlCharactersBecomeVisibleEscapes() {
        let text = "a\u{1B}[2J\rb\u{7}c\u{7F}d\u{0}e\u{85}f\u{9B}g\u{202E}h\u{2066}i\u{2069}j"
        XCTAssertEqual(TerminalText.field(text),
                       #"a\e[2J\rb\x07c\x7Fd\x00e\u{0085}f\u{009B}g\u{202E}h\u{2066}i\u{2069}j"#)
        // Marks, zero-width characters and separators that change a
        // line without showing themselves.
        XCTAssertEqual(TerminalText.field("L\u{2028}\u{2029}\u{200E}\u{061C}\u{FEFF}\u{200B}\u{2060}\u{FFF9}|"),
                       #"L\u{2028}\u{2029}\u{200E}\u{061C}\u{FEFF}\u{200B}\u{2060}\u{FFF9}|"#)
        // What stays as it is: printable ASCII, other Unicode, backslashes.
        let plain = #"résumé 日本 ✓ \e \x07 a\b — “quoted” ‰"#
        XCTAssertEqual(TerminalText.field(plain), plain)
    }

    func testTabsAndLineBreaksStayOnlyWhereTheCallerOwnsThem() {
        let text = "a\tb\nc\r\n"
        XCTAssertEqual(TerminalText.field(text), #"a\tb\nc\r\n"#)
        XCTAssertEqual(TerminalText.line(text), "a\tb" + #"\nc\r\n"#)
        XCTAssertEqual(TerminalText.text(text), "a\tb\nc" + #"\r"# + "\n")
    }

    // MARK: ConsoleOutput, human mode

    func testPrintedBytesAreEscapedAndIllFormedUTF8ShownAsHex() throws {
        let (out, err) = try captured(json: false) { console in
            printBytes(console, [0x61, 0x1B, 0x5B, 0x32, 0x4A, 0x0D, 0x62, 0x09, 0x63, 0x0A, 0x64])  // a ESC[2J CR b TAB c LF d
            printBytes(console, [0x78, 0xFF, 0xC3, 0x28, 0xE2, 0x80, 0xAE, 0x79])  // x, 0xFF, a cut sequence, U+202E, y
            console.log(.info, "line\nforged\u{1B}", fields: ["k\r": .string("a b\u{1B}"), "n": .integer(3)])
        }
        XCTAssertEqual(out, "a\\e[2J\\rb\tc\nd\n" + #"x\xFF\xC3(\u{202E}y"# + "\n")
        XCTAssertEqual(err, #"[info] line\nforged\e k\r="a b\e" n=3"# + "\n")
    }

    func testLinesFromPrintAndStderrKeepTheirOrder() throws {
        let (out, err) = try captured(json: false, sameFD: true) { console in
            console.printLine("one")
            console.writeStderr("two\n")
            console.printLine("three")
            console.log(.warn, "four", fields: [:])
        }
        XCTAssertEqual(out, "one\ntwo\nthree\n[warn] four\n")
        XCTAssertEqual(err, "")
    }

    func testALargeCleanLineIsWrittenWhole() throws {
        let line = String(repeating: "0123456789abcdef", count: 1 << 16)  // 1 MiB
        let (out, _) = try captured(json: false) { console in
            var copy = line
            copy.withUTF8 { console.printLine(bytes: UnsafeRawBufferPointer($0)) }
            console.printLine("after")
        }
        XCTAssertEqual(out, line + "\nafter\n")
    }

    // MARK: ConsoleOutput, --json

    func testJSONPrintLinesAreExactlyWhatJSONCodecWrites() throws {
        var generator = SplitMix(seed: 42)
        var samples: [[UInt8]] = [
            [], Array("plain".utf8), Array("quote \" backslash \\ tab \t nl \n cr \r esc \u{1B} del \u{7F}".utf8),
            Array("日本 ✓ \u{85} \u{202E}".utf8), [0xFF], [0xC3], [0xE2, 0x80], [0xED, 0xA0, 0x80], [0xF4, 0x90, 0x80, 0x80],
            [0xF0, 0x9F, 0x98], [0xC0, 0xAF], [0xE0, 0x80, 0xAF], [0xF8, 0x88, 0x80, 0x80, 0x80],
        ]
        let alphabet: [UInt8] = [0x00, 0x09, 0x0A, 0x1B, 0x22, 0x5C, 0x41, 0x7F, 0x80, 0x9F, 0xBF, 0xC2, 0xC3, 0xDF, 0xE0,
                                 0xE2, 0xED, 0xEF, 0xF0, 0xF4, 0xF5, 0xFF, 0xA0, 0x90, 0x8F]
        for _ in 0..<500 {
            samples.append((0..<Int(generator.next() % 12)).map { _ in alphabet[Int(generator.next() % UInt64(alphabet.count))] })
        }
        let (out, _) = try captured(json: true) { console in
            for sample in samples { printBytes(console, sample) }
        }
        let expected = try samples.map { sample in
            try JSONCodec.encode(.object(["text": .string(String(decoding: sample, as: UTF8.self)), "type": .string("print")])) + "\n"
        }.joined()
        XCTAssertEqual(out, expected)
    }

    func testJSONEventsAndLogsAreLinesOnStdout() throws {
        let (out, err) = try captured(json: true) { console in
            console.log(.info, "hi\u{1B}", fields: [:])
            console.event("write", ["path": .string("/x\r")])
        }
        XCTAssertEqual(out, #"{"level":"info","message":"hi\u001b","type":"log"}"# + "\n"
                       + #"{"path":"/x\r","type":"write"}"# + "\n")
        XCTAssertEqual(err, "")
    }

    // MARK: writeBeforeExit

    func testWriteBeforeExitFallsBackToStderrWhenStdoutIsStuck() throws {
        // stdout: a pipe nobody reads, filled up, and a printer blocked on it holding
        // the output's lock: the fallback text goes to stderr within the bounded waits.
        let stdoutPipe = Pipe(), stderrPipe = Pipe()
        let console = ConsoleOutput(json: true, stdoutFD: stdoutPipe.fileHandleForWriting.fileDescriptor,
                                    stderrFD: stderrPipe.fileHandleForWriting.fileDescriptor)
        let big = String(repeating: "x", count: 1 << 20)
        let printer = Thread { console.printLine(big) }
        printer.start()
        Thread.sleep(forTimeInterval: 0.2)
        let start = Date()
        console.writeBeforeExit(stdoutText: "{\"type\":\"summary\"}\n", stderrText: "", stderrIfStdoutFails: "error: stuck\n",
                                lockWait: 0.2, writeWait: 0.3)
        let seconds = Date().timeIntervalSince(start)
        XCTAssertLessThan(seconds, 1.5)
        try stderrPipe.fileHandleForWriting.close()
        XCTAssertEqual(String(decoding: stderrPipe.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self), "error: stuck\n")
        // Unblock the printer: drain its whole line, which nothing interrupted.
        let lineLength = #"{"text":"","type":"print"}"#.utf8.count + big.utf8.count + 1
        let drainedAll = DispatchSemaphore(value: 0)
        Thread {
            var drained = 0
            while drained < lineLength { drained += stdoutPipe.fileHandleForReading.availableData.count }
            drainedAll.signal()
        }.start()
        XCTAssertEqual(drainedAll.wait(timeout: .now() + 10), .success, "the printed line did not come through whole")
    }

    // MARK: Secrets

    func testARegisteredSecretIsMaskedInPrintLogsEventsAndLongLines() throws {
        let secret = "hs-console-test-\u{1}\"q\"-9f8e7d6c5b4a"   // a control character and quotes: escaped forms too
        secret.utf8CString.withUnsafeBytes { SecretRedactor.shared.register(UnsafeRawBufferPointer(rebasing: $0.dropLast()), name: "test/console") }
        let long = String(repeating: "x", count: 200_000) + secret + String(repeating: "y", count: 70_000)
        for json in [false, true] {
            let (out, err) = try captured(json: json) { console in
                console.printLine("token=\(secret)!")
                console.log(.info, "auth with \(secret)", fields: ["t": .string("Bearer \(secret)")])
                console.event("write", ["summary": .string(secret)])
                console.printLine(long)
            }
            let both = out + err
            XCTAssertFalse(both.contains("9f8e7d6c5b4a"), "json=\(json): \(both.prefix(300))")
            XCTAssertEqual(both.components(separatedBy: "<secret test/console>").count - 1, json ? 5 : 4, "json=\(json)")
            XCTAssertTrue(out.contains(String(repeating: "y", count: 70_000)))
        }
    }

    func testRedactionMasksEveryOccurrenceLongestFirstAndLeavesShortValues() {
        let r = SecretRedactor()
        Array("abcdefgh".utf8).withUnsafeBytes { r.register($0, name: "long") }
        Array("abcd".utf8).withUnsafeBytes { r.register($0, name: "short") }
        Array("xyz".utf8).withUnsafeBytes { r.register($0, name: "tiny") }
        XCTAssertEqual(r.redact("abcdefgh abcd abcdefghabcd xyz"),
                       "<secret long> <secret short> <secret long><secret short> xyz")
        XCTAssertEqual(r.redact("nothing here"), "nothing here")
        XCTAssertEqual(r.redact(Data("--abcd--".utf8)), Data("--<secret short>--".utf8))
    }

    // MARK: Helpers

    /// Runs `body` with a console on two pipes (or one, for both streams); returns what
    /// each received.
    private func captured(json: Bool, sameFD: Bool = false, _ body: (ConsoleOutput) -> Void) throws -> (String, String) {
        let outPipe = Pipe(), errPipe = Pipe()
        let outFD = outPipe.fileHandleForWriting.fileDescriptor
        let console = ConsoleOutput(json: json, stdoutFD: outFD,
                                    stderrFD: sameFD ? outFD : errPipe.fileHandleForWriting.fileDescriptor)
        let outData = LockedBytes(), errData = LockedBytes()
        let readers = [Thread { outData.set(outPipe.fileHandleForReading.readDataToEndOfFile()) },
                       Thread { errData.set(errPipe.fileHandleForReading.readDataToEndOfFile()) }]
        readers.forEach { $0.start() }
        body(console)
        try outPipe.fileHandleForWriting.close()
        try errPipe.fileHandleForWriting.close()
        while !outData.isSet || !errData.isSet { usleep(1_000) }
        return (String(decoding: outData.value, as: UTF8.self), String(decoding: errData.value, as: UTF8.self))
    }

    private func printBytes(_ console: ConsoleOutput, _ bytes: [UInt8]) {
        bytes.withUnsafeBytes { console.printLine(bytes: $0) }
    }
}

/// `Data` handed over from a reader thread.
private final class LockedBytes: @unchecked Sendable {
    private let lock = NSLock()
    private var data: Data?
    func set(_ d: Data) { lock.withLock { data = d } }
    var isSet: Bool { lock.withLock { data != nil } }
    var value: Data { lock.withLock { data ?? Data() } }
}

