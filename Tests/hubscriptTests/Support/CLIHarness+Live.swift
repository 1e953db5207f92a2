import Foundation
import XCTest

extension CLIHarness {
    /// A running `hubscript` child whose stdout the test watches (or leaves unread) while
    /// it runs (`CLIHarness.live`, `CLIHarness.liveIsolated`). Stderr goes to a file, read
    /// with `stderr` after the end.
    final class LiveProcess {
        let process: Process
        let stdout = Pipe()
        let started: Date
        private let scratch: URL
        private let stderrURL: URL
        private var pending = Data()

        /// Starts `process`, configured and not started (`CLIHarness.process`,
        /// `CLIHarness.configured`); stderr goes to a file in `scratch`.
        init(process: Process, scratch: URL? = nil, stdoutFile: URL? = nil) throws {
            self.process = process
            self.scratch = scratch ?? FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-live-\(UUID().uuidString)")
            try FileManager.default.createDirectory(at: self.scratch, withIntermediateDirectories: true)
            stderrURL = self.scratch.appendingPathComponent("stderr")
            _ = FileManager.default.createFile(atPath: stderrURL.path, contents: nil)
            if let stdoutFile {
                _ = FileManager.default.createFile(atPath: stdoutFile.path, contents: nil)
                process.standardOutput = try FileHandle(forWritingTo: stdoutFile)
            } else {
                process.standardOutput = stdout
            }
            process.standardError = try FileHandle(forWritingTo: stderrURL)
            started = Date()
            try process.run()
            // The parent's copy of the write end would keep the pipe open after the child ends.
            try stdout.fileHandleForWriting.close()
        }

        deinit {
            if process.isRunning { kill(process.processIdentifier, SIGKILL) }
            try? FileManager.default.removeItem(at: scratch)
        }

        /// Seconds since the child started.
        var elapsed: Double { Date().timeIntervalSince(started) }

        /// Reads stdout up to the next line break; nil at the end of the stream.
        func readLine() -> String? {
            while true {
                if let newline = pending.firstIndex(of: 0x0A) {
                    let line = pending[pending.startIndex..<newline]
                    pending = Data(pending[(newline + 1)...])
                    return String(decoding: line, as: UTF8.self)
                }
                let chunk = stdout.fileHandleForReading.availableData
                if chunk.isEmpty { return nil }
                pending.append(chunk)
            }
        }

        /// Everything left on stdout, to its end.
        func readRest() -> String {
            let rest = pending + stdout.fileHandleForReading.readDataToEndOfFile()
            pending = Data()
            return String(decoding: rest, as: UTF8.self)
        }

        /// Waits for the child to end; if it still runs after `seconds`, kills it and
        /// returns false (its exit status is then that of SIGKILL, never a real one).
        func waitForExit(within seconds: Double) -> Bool {
            let deadline = Date().addingTimeInterval(seconds)
            while process.isRunning && Date() < deadline { usleep(10_000) }
            if process.isRunning {
                killHard()
                return false
            }
            process.waitUntilExit()
            return true
        }

        func killHard() {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }

        /// stderr without the run start line (`RunStartLine`).
        var stderr: String { RunStartLine.removing(from: (try? String(contentsOf: stderrURL, encoding: .utf8)) ?? "") }
    }
}
