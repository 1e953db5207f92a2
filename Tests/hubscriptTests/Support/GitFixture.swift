import Foundation
import XCTest

/// A local bare repository made in the test — the upstream of a git library (there is
/// no network) — and a work tree that commits and pushes to it.
struct GitFixture {
    let bare: URL
    let work: URL

    /// The `git+file://…` source of the bare repository, without a commit.
    var source: String { "git+file://" + bare.path }

    /// Makes `folder/<name>` (bare) and `folder/<name>-work`; skips the test without git.
    init(in folder: URL, name: String = "upstream.git") throws {
        guard FileManager.default.isExecutableFile(atPath: "/usr/bin/git") else { throw XCTSkip("git is not installed") }
        bare = folder.appendingPathComponent(name, isDirectory: true)
        work = folder.appendingPathComponent(name + "-work", isDirectory: true)
        try Self.git(["init", "-q", "--bare", bare.path], in: folder)
        try Self.git(["init", "-q", work.path], in: folder)
    }

    /// Writes `files` (path → text) in the work tree, commits them and pushes to the
    /// bare repository's `main`; returns the commit id.
    @discardableResult
    func commit(_ files: [String: String], message: String = "update") throws -> String {
        for (path, text) in files {
            let url = work.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try Data(text.utf8).write(to: url)
        }
        try Self.git(["add", "-A"], in: work)
        try Self.git(["-c", "user.name=Test", "-c", "user.email=test@example.com", "commit", "-q", "-m", message], in: work)
        try Self.git(["push", "-q", bare.path, "HEAD:refs/heads/main"], in: work)
        return try Self.git(["rev-parse", "HEAD"], in: work).trimmingCharacters(in: .whitespacesAndNewlines)
    }

    /// Runs git (no shell); fails with its stderr unless it exits 0. Returns stdout.
    @discardableResult
    static func git(_ args: [String], in folder: URL) throws -> String {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: "/usr/bin/git")
        p.arguments = args
        p.currentDirectoryURL = folder
        p.environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("GIT_") }
        let out = Pipe(), err = Pipe()
        p.standardOutput = out
        p.standardError = err
        try p.run()
        let stdout = out.fileHandleForReading.readDataToEndOfFile()
        let stderr = err.fileHandleForReading.readDataToEndOfFile()
        p.waitUntilExit()
        guard p.terminationStatus == 0 else {
            throw NSError(domain: "git", code: Int(p.terminationStatus),
                          userInfo: [NSLocalizedDescriptionKey: "git \(args.joined(separator: " ")): \(String(decoding: stderr, as: UTF8.self))"])
        }
        return String(decoding: stdout, as: UTF8.self)
    }
}
