import Foundation
import Vault
import XCTest

/// Runs `hubscript vault …` with a private state directory (CLIHarness), a key file
/// made by `vault init`, and what a test puts on standard input or in the environment.
final class VaultCLI {
    let harness: CLIHarness
    var keyFile: String { harness.root.appendingPathComponent("vault.key").path }
    var folder: URL { harness.stateDir.appendingPathComponent("vault", isDirectory: true) }
    var indexPath: String { folder.appendingPathComponent(Vault.indexFileName).path }

    init(testCase: XCTestCase) throws { harness = try CLIHarness(testCase: testCase) }

    struct Outcome {
        let status: Int32
        /// Whether the process died of a signal (`status` is then the signal number).
        let signalled: Bool
        let stdout: String
        let stderr: String
    }

    /// The child, its output going to files, `stdin` fed from a file (or `input`, or
    /// /dev/null). `debugBuild`: the debug `hubscript` built beside the tests, whatever
    /// binary is under test (only a debug build has the vault's kill points).
    func start(_ args: [String], stdin: String? = nil, input: FileHandle? = nil,
               environment: [String: String] = [:], debugBuild: Bool = false) throws -> (Process, () throws -> Outcome) {
        let (process, _, _) = harness.process(["vault"] + args)
        if debugBuild {
            try CLIHarness.requireBinary(at: CLIHarness.debugBinary)
            process.executableURL = CLIHarness.debugBinary
        }
        let id = UUID().uuidString
        let out = harness.root.appendingPathComponent("out-\(id)"), err = harness.root.appendingPathComponent("err-\(id)")
        for url in [out, err] { _ = FileManager.default.createFile(atPath: url.path, contents: nil) }
        process.standardOutput = try FileHandle(forWritingTo: out)
        process.standardError = try FileHandle(forWritingTo: err)
        if let input { process.standardInput = input }
        if let stdin {
            let input = harness.root.appendingPathComponent("in-\(id)")
            try Data(stdin.utf8).write(to: input)
            process.standardInput = try FileHandle(forReadingFrom: input)
        }
        process.environment = harness.environment.merging(environment) { $1 }
        try process.run()
        return (process, {
            process.waitUntilExit()
            defer { for url in [out, err] { try? FileManager.default.removeItem(at: url) } }
            return Outcome(status: process.terminationStatus, signalled: process.terminationReason == .uncaughtSignal,
                           stdout: String(decoding: try Data(contentsOf: out), as: UTF8.self),
                           stderr: String(decoding: try Data(contentsOf: err), as: UTF8.self))
        })
    }

    /// Runs `hubscript vault args… --state-dir STATE` to its end.
    @discardableResult
    func run(_ args: [String], stdin: String? = nil, environment: [String: String] = [:], debugBuild: Bool = false) throws -> Outcome {
        try start(args, stdin: stdin, environment: environment, debugBuild: debugBuild).1()
    }

    /// `vault init --key-file KEY`, which must succeed.
    func initialise() throws {
        let r = try run(["init", "--key-file", keyFile])
        XCTAssertEqual(r.status, 0, r.stderr)
    }

    /// The vault, opened in this process with the key file.
    func open() throws -> Vault { try Vault.open(at: folder, key: .keyFile(keyFile)) }

    /// The byte range of `name`'s record in a format-2 vault file (after the 112-byte
    /// header; the index seal follows the last record).
    static func recordRange(_ name: String, in bytes: [UInt8]) -> Range<Int>? {
        var offset = 112
        let count = (0..<4).reduce(0) { $0 | Int(bytes[60 + $1]) << (8 * $1) }
        for _ in 0..<count {
            let length = Int(bytes[offset + 2]) | Int(bytes[offset + 3]) << 8
            let sealedAt = offset + 4 + length + 16 + 24
            let end = sealedAt + 4 + (0..<4).reduce(0) { $0 | Int(bytes[sealedAt + $1]) << (8 * $1) }
            if Array(bytes[(offset + 4)..<(offset + 4 + length)]) == Array(name.utf8) { return offset..<end }
            offset = end
        }
        return nil
    }

    func value(_ name: String) throws -> String {
        try open().secret(named: name).withUnsafeBytes { String(decoding: $0, as: UTF8.self) }
    }
}
