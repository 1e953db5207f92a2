import Foundation
import XCTest
@testable import HubClient
@testable import Configuration

/// A configuration file decides where credentials are sent, so hubscript reads one only
/// if nobody but the user (or root) can change it.
final class ConfigTrustTests: XCTestCase {
    var folder: URL!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-config-trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
    }

    override func tearDownWithError() throws {
        try? FileManager.default.removeItem(at: folder)
    }

    func write(_ name: String, mode: mode_t) throws -> String {
        let path = folder.appendingPathComponent(name).path
        try Data(#"return { profiles = { evil = { hub_url = "https://attacker.example", api_key_env = "SUBSTRATAL_API_KEY" } } }"#.utf8)
            .write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(chmod(path, mode), 0)
        return path
    }

    static let why = "hubscript reads only a configuration that nobody but you (or root) can change, since it decides where your credentials are sent"

    /// A trusted file is read whole and exactly: empty, small, and larger than any
    /// buffer the read starts with.
    func testATrustedFileIsReadWhole() throws {
        for size in [0, 1, 4095, 4096, 65_537, 300_001] {
            let path = folder.appendingPathComponent("c\(size).lua").path
            let bytes = (0..<size).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }
            try Data(bytes).write(to: URL(fileURLWithPath: path))
            XCTAssertEqual(chmod(path, 0o600), 0)
            XCTAssertEqual(try ConfigTrust.read(path), Data(bytes), "\(size) bytes")
        }
    }

    /// A file whose size says 0 but that has bytes (as /proc's do, like a file that grew
    /// after its size was read) is read whole through the buffer's growth.
    func testAFileLongerThanItsSizeIsReadWhole() throws {
        for path in ["/proc/self/cmdline", "/proc/self/mountinfo"] {
            var info = stat()
            guard stat(path, &info) == 0, info.st_size == 0, info.st_uid == geteuid() else { continue }
            let expected = try XCTUnwrap(FileManager.default.contents(atPath: path))
            XCTAssertGreaterThan(expected.count, 10)
            XCTAssertEqual(try ConfigTrust.read(path), expected, path)
        }
    }

    /// A file larger than any configuration (a sparse one of terabytes, made by
    /// mistake) is refused with its reason; a buffer of its size aborted the process.
    func testAHugeSparseFileIsRefusedNotAllocated() throws {
        for size in [Int64(ConfigTrust.maxBytes) + 1, 8 << 40] {
            let path = folder.appendingPathComponent("huge\(size).lua").path
            let fd = open(path, O_WRONLY | O_CREAT, 0o600)
            XCTAssertGreaterThanOrEqual(fd, 0)
            guard ftruncate(fd, off_t(size)) == 0 else { close(fd); continue }   // too large for this file system
            close(fd)
            XCTAssertThrowsError(try ConfigTrust.read(path), "\(size) bytes") { error in
                XCTAssertEqual("\(error)", "config \(path): is larger than 64 MiB; a configuration is a small Lua file that returns a table")
            }
        }
    }

    /// Nothing is kept between loads: each load evaluates the file's bytes anew and
    /// checks its trust again, so a command never gets a value made from an earlier
    /// version of the file, or from a file that has since become untrusted.
    func testEveryLoadEvaluatesTheFileAnewAndChecksItsTrustAgain() throws {
        let path = folder.appendingPathComponent("expr.lua").path
        func put(_ text: String, mode: mode_t = 0o600) throws {
            try Data(text.utf8).write(to: URL(fileURLWithPath: path))
            XCTAssertEqual(chmod(path, mode), 0)
        }
        let evaluations = EvaluationCounter()
        func load() throws -> LoadedConfiguration {
            try LoadedConfiguration.load(explicit: path, evaluator: evaluations.evaluator)
        }
        try put(#"return { default_profile = "a" .. "b" }"#)   // not plain literals: evaluated in Lua
        XCTAssertEqual(try load().hub.defaultProfile, "ab")
        XCTAssertEqual(try load().hub.defaultProfile, "ab")
        XCTAssertEqual(evaluations.count, 2)
        try put(#"return { default_profile = "a" .. "c" }"#)   // same size, other bytes
        XCTAssertEqual(try load().hub.defaultProfile, "ac")
        XCTAssertEqual(evaluations.count, 3)
        try put(#"return { default_profile = "a" .. "c" }"#, mode: 0o602)
        XCTAssertThrowsError(try load()) {
            XCTAssertEqual("\($0)", "config \(path): is writable by others (mode 0602); \(Self.why). Fix: chmod go-w \(path)")
        }
        XCTAssertEqual(evaluations.count, 3, "an untrusted file is never evaluated")
    }

    func testAConfigWritableByOthersIsRefusedHoweverItIsFound() throws {
        let path = try write("hubscript.config.lua", mode: 0o666)
        let expected = "config \(path): is writable by its group and others (mode 0666); \(Self.why). Fix: chmod go-w \(path)"
        let noConfigHome = ["XDG_CONFIG_HOME": folder.appendingPathComponent("none").path]
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: nil, environment: noConfigHome, currentDirectory: folder.path).hub) {
            XCTAssertEqual("\($0)", expected)
        }
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: path).hub) { XCTAssertEqual("\($0)", expected) }
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: nil, environment: ["HUBSCRIPT_CONFIG": path]).hub) {
            XCTAssertEqual("\($0)", expected)
        }
        XCTAssertEqual(chmod(path, 0o646), 0)
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: path).hub) {
            XCTAssertEqual("\($0)", "config \(path): is writable by others (mode 0646); \(Self.why). Fix: chmod go-w \(path)")
        }
        XCTAssertEqual(chmod(path, 0o664), 0)
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: path).hub) {
            XCTAssertEqual("\($0)", "config \(path): is writable by its group (mode 0664); \(Self.why). Fix: chmod go-w \(path)")
        }
        XCTAssertEqual(chmod(path, 0o644), 0)
        XCTAssertEqual(try LoadedConfiguration.load(explicit: path).hub.profiles.keys.sorted(), ["evil"])
        XCTAssertEqual(chmod(path, 0o600), 0)
        XCTAssertEqual(try LoadedConfiguration.load(explicit: path).hub.profiles.keys.sorted(), ["evil"])
    }

    func testALinkToAnUntrustedFileIsRefused() throws {
        let target = try write("shared.lua", mode: 0o666)
        let link = folder.appendingPathComponent("hubscript.config.lua").path
        XCTAssertEqual(symlink(target, link), 0)
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: link).hub) {
            XCTAssertEqual("\($0)", "config \(link): is writable by its group and others (mode 0666); \(Self.why). Fix: chmod go-w \(link)")
        }
    }

    func testAConfigOwnedByAnotherUserIsRefused() throws {
        var info = stat()
        info.st_mode = S_IFREG | 0o644
        info.st_uid = 4242
        XCTAssertThrowsError(try ConfigTrust.check(info, path: "/p/config.lua", user: 4343)) {
            XCTAssertEqual("\($0)", "config /p/config.lua: is owned by another user (uid 4242), not by you (uid 4343) or root; \(Self.why). Fix: chown 4343 /p/config.lua, or use a file of your own (--config)")
        }
        info.st_uid = 0
        XCTAssertNoThrow(try ConfigTrust.check(info, path: "/p/config.lua", user: 4343), "root's files are trusted")
        info.st_uid = 4343
        XCTAssertNoThrow(try ConfigTrust.check(info, path: "/p/config.lua", user: 4343))

        // The same with a real file, where the test may change its owner.
        guard geteuid() == 0 else { throw XCTSkip("changing a file's owner needs root") }
        let path = try write("hubscript.config.lua", mode: 0o644)
        XCTAssertEqual(chown(path, 65534, 65534), 0)
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: nil, environment: [:], currentDirectory: folder.path).hub) {
            XCTAssertEqual("\($0)", "config \(path): is owned by another user (uid 65534), not by you (uid 0) or root; \(Self.why). Fix: chown root \(path), or use a file of your own (--config)")
        }
    }

    func testAFIFOIsRefusedWithoutWaiting() throws {
        let path = folder.appendingPathComponent("config.lua").path
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        XCTAssertThrowsError(try LoadedConfiguration.load(explicit: path).hub) {
            XCTAssertEqual("\($0)", "config \(path): is not a regular file")
        }
    }
}
