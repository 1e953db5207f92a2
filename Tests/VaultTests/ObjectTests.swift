import Foundation
import XCTest
@testable import Vault

/// Objects: streamed in chunks, content-addressed, verified to their final chunk, and
/// written out whole or not at all.
final class ObjectTests: VaultTestCase {
    func bytes(_ count: Int, seed: Int = 0) -> [UInt8] { (0..<count).map { UInt8(truncatingIfNeeded: ($0 &+ seed) &* 131 &+ 17) } }

    func readAll(_ vault: Vault, _ ref: String) throws -> [UInt8] {
        var out: [UInt8] = []
        try vault.readObject(ref) { out += $0 }
        return out
    }

    func testObjectsOfEverySizeAroundAChunkRoundTrip() throws {
        let vault = try makeVault()
        for size in [0, 1, 1023, 1024, 1025, 3 * 1024 + 5, 4096] {
            let data = bytes(size, seed: size)
            let writer = try vault.makeObjectWriter()
            // Uneven writes, to cross chunk boundaries inside one write.
            var offset = 0
            var step = 1
            while offset < data.count {
                let end = min(offset + step, data.count)
                try writer.write(Array(data[offset..<end]))
                offset = end
                step = step * 3 + 1
            }
            let info = try writer.finish()
            XCTAssertEqual(info.size, UInt64(size))
            XCTAssertNil(info.name)
            XCTAssertEqual(try readAll(vault, info.id), data, "size \(size)")
            XCTAssertEqual(try readAll(try open(), info.id), data, "size \(size), reopened")
        }
        XCTAssertEqual(try vault.verify().objects, 7)
    }

    func testANamedObjectIsReplacedByTheNextOfTheSameNameAndItsOldFileDeleted() throws {
        let vault = try makeVault()
        let first = try write(vault, bytes(2000), name: "audit/ada.jsonl")
        let second = try write(vault, bytes(10, seed: 1), name: "audit/ada.jsonl")
        XCTAssertNotEqual(first.id, second.id)
        XCTAssertEqual(try vault.objectID(named: "audit/ada.jsonl"), second.id)
        XCTAssertEqual(try readAll(vault, "audit/ada.jsonl"), bytes(10, seed: 1))
        XCTAssertEqual(try objectFiles(), [second.id])
        let entries = try vault.list()
        XCTAssertEqual(entries.map(\.name), ["audit/ada.jsonl"])
        XCTAssertEqual(entries.first?.object, VaultObjectInfo(id: second.id, name: "audit/ada.jsonl", size: 10))
        XCTAssertEqual(try vault.remove(second.id), .object, "by id")
        XCTAssertEqual(try objectFiles(), [])
        XCTAssertEqual(try vault.list(), [])
    }

    func testAnObjectCannotTakeASecretsNameNorASecretAnObjects() throws {
        let vault = try makeVault([("token", "t")])
        assertVaultError(.invalidName, "'token' is a secret in the vault: choose another name for the object") {
            try vault.makeObjectWriter(name: "token")
        }
        _ = try write(vault, bytes(5), name: "report")
        assertVaultError(.invalidName, "'report' is an object in the vault: remove it first or choose another name") {
            try vault.setSecret("report", value: try SecretBytes(copying: [1]))
        }
        assertVaultError(.notFound, "'report' is an object, not a secret (hubscript vault get-object report)") { try vault.secret(named: "report") }
        assertVaultError(.notFound, "'token' is a secret, not an object") { try vault.readObject("token") { _ in } }
    }

    func testATruncatedObjectFileIsRefusedAtEveryLength() throws {
        let vault = try makeVault()
        let info = try write(vault, bytes(2500))
        let path = objectPath(info.id)
        let full = try fileBytes(path)
        for length in 0..<full.count {
            try writeFile(Array(full[0..<length]), path)
            do {
                try vault.readObject(info.id) { _ in }
                XCTFail("an object cut to \(length) bytes was read")
            } catch let error as VaultError {
                XCTAssertEqual(error.code, .truncated, "at \(length): \(error.message)")
            }
        }
        try writeFile(Array(full[0..<1000]), path)
        assertVaultError(.truncated, "the file of object \(info.id) is truncated (1000 of \(full.count) bytes): restore it from a backup") {
            try vault.readObject(info.id) { _ in }
        }
        try writeFile(full + [0], path)
        assertVaultError(.corrupt, "the file of object \(info.id) is longer than it should be (\(full.count + 1), not \(full.count) bytes)") {
            try vault.readObject(info.id) { _ in }
        }
    }

    func testATamperedChunkIsRefusedAndNamed() throws {
        let vault = try makeVault()
        let info = try write(vault, bytes(2500), name: "r")
        var file = try fileBytes(objectPath(info.id))
        file[40 + 1041 + 10] ^= 0x80   // inside the second chunk
        try writeFile(file, objectPath(info.id))
        var received = 0
        assertVaultError(.tampered, "object 'r' (\(info.id)) failed authentication after 1024 bytes: it was altered or corrupted") {
            try vault.readObject("r") { received += $0.count }
        }
        XCTAssertEqual(received, 1024, "only the authenticated first chunk reached the sink")
        assertVaultError(.tampered, "the file of object 'r' (\(info.id)) does not hash to its id: it was altered or replaced") { try vault.verify() }
    }

    func testANewerObjectFormatAndAMissingFileAreNamed() throws {
        let vault = try makeVault()
        let info = try write(vault, bytes(10))
        var file = try fileBytes(objectPath(info.id))
        file[8] = 9
        try writeFile(file, objectPath(info.id))
        assertVaultError(.newerFormat, "the file of object \(info.id) was written by a newer hubscript: format 9, this build reads up to 1") {
            try vault.readObject(info.id) { _ in }
        }
        try FileManager.default.removeItem(atPath: objectPath(info.id))
        assertVaultError(.notFound, "the file of object \(info.id) is missing from \(vaultFolder.path)/objects (restore it from a backup)") {
            try vault.readObject(info.id) { _ in }
        }
        assertVaultError(.notFound, "no object 'obj_nope' in the vault \(vaultFolder.path)") { try vault.readObject("obj_nope") { _ in } }
    }

    func testGetObjectLeavesTheOutputAsItWasWhenTheObjectFailsToVerify() throws {
        let vault = try makeVault()
        let info = try write(vault, bytes(5000), name: "r")
        let out = root.appendingPathComponent("out.bin").path
        try vault.getObject("r", to: out)
        XCTAssertEqual(try fileBytes(out), bytes(5000))
        var mode = stat()
        stat(out, &mode)
        XCTAssertEqual(mode.st_mode & 0o777, 0o600)
        // Damage the last chunk: the first four chunks verify and are written to the
        // temporary file, but `out` keeps its old content and nothing else is left.
        try writeFile(Array("old".utf8), out)
        var file = try fileBytes(objectPath(info.id))
        file[file.count - 3] ^= 1
        try writeFile(file, objectPath(info.id))
        assertVaultError(.tampered, "object 'r' (\(info.id)) failed authentication after 4096 bytes: it was altered or corrupted") {
            try vault.getObject("r", to: out)
        }
        XCTAssertEqual(try fileBytes(out), Array("old".utf8))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: root.path).sorted(), ["out.bin", "vault"])
        let missing = root.appendingPathComponent("new.bin").path
        assertVaultError(.tampered, "object 'r' (\(info.id)) failed authentication after 4096 bytes: it was altered or corrupted") {
            try vault.getObject("r", to: missing)
        }
        XCTAssertFalse(FileManager.default.fileExists(atPath: missing))
    }

    func testAnAbortedWriterLeavesNothingAndTheVaultUnchanged() throws {
        let vault = try makeVault([("a", "1")])
        let before = try fileBytes()
        let writer = try vault.makeObjectWriter(name: "big")
        try writer.write(bytes(5000))
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: objectsFolder).count, 1)
        writer.abort()
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: objectsFolder), [])
        XCTAssertEqual(try fileBytes(), before)
        assertVaultError(.internalError, "this object writer has already finished or aborted") { try writer.finish() }
        do {
            let dropped = try vault.makeObjectWriter()
            try dropped.write(bytes(10))
        }
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: objectsFolder), [], "deinit aborts")
    }

    func testAStaleTemporaryObjectIsRemovedByTheNextWriteButALiveOneIsNot() throws {
        let vault = try makeVault()
        let stale = objectsFolder + "/.object.tmp-dead"
        try writeFile([1, 2, 3], stale)
        var old = utimbuf(actime: time(nil) - 120, modtime: time(nil) - 120)
        utime(stale, &old)
        let live = try vault.makeObjectWriter()
        try writeFile([1], indexPath.replacingOccurrences(of: "vault.hsv", with: ".vault.hsv.tmp-dead"))
        try vault.setSecret("a", value: try SecretBytes(copying: [1]))
        let left = try FileManager.default.contentsOfDirectory(atPath: objectsFolder)
        XCTAssertEqual(left.count, 1)
        XCTAssertTrue(left[0].hasPrefix(".object.tmp-") && left[0] != ".object.tmp-dead", "\(left)")
        XCTAssertEqual(try FileManager.default.contentsOfDirectory(atPath: vaultFolder.path).sorted(), ["objects", "vault.hsv", "vault.lock"])
        _ = try live.finish()
    }

    var objectsFolder: String { vaultFolder.appendingPathComponent("objects").path }
    func objectPath(_ id: String) -> String { objectsFolder + "/" + id }
    func objectFiles() throws -> [String] { try FileManager.default.contentsOfDirectory(atPath: objectsFolder).sorted() }

    func write(_ vault: Vault, _ data: [UInt8], name: String? = nil) throws -> VaultObjectInfo {
        let writer = try vault.makeObjectWriter(name: name)
        try writer.write(data)
        return try writer.finish()
    }
}
