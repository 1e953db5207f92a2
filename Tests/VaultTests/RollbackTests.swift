import Foundation
import XCTest
@testable import Vault

/// The index is authenticated as a whole (docs/vault-format.md, "Rollback"): an entry
/// replaced by an older sealed copy of itself — which needs no key to do — is refused
/// at every open, naming the entry; so is a whole vault older than this machine has
/// seen. A restore made on purpose is accepted with `reseal`.
final class RollbackTests: VaultTestCase {
    var memoryFolder: URL { root.appendingPathComponent("state/vault-generations", isDirectory: true) }
    var memory: VaultGenerationMemory { VaultGenerationMemory(folder: memoryFolder) }

    func remembering(_ checkpoint: @escaping @Sendable (String) -> Void = { _ in }) -> VaultOptions {
        var o = options(checkpoint: checkpoint)
        o.generationMemory = memory
        return o
    }

    func openRemembering(policy: VaultRollbackPolicy = .refuse) throws -> Vault {
        try Vault.open(at: vaultFolder, key: .key(try key()), options: remembering(), policy: policy)
    }

    func set(_ vault: Vault, _ name: String, _ value: String) throws {
        try vault.setSecret(name, value: try SecretBytes(copying: Array(value.utf8)))
    }

    /// The bytes of `name`'s record in `bytes`.
    func record(_ name: String, in bytes: [UInt8]) throws -> ArraySlice<UInt8> {
        let at = try XCTUnwrap(recordOffset(name, in: bytes), "no record \(name)")
        return bytes[at.start..<at.end]
    }

    /// `current` with the record of `name` replaced by `old`'s record of `oldName`.
    func splice(_ name: String, in current: [UInt8], with oldName: String, from old: [UInt8]) throws -> [UInt8] {
        let at = try XCTUnwrap(recordOffset(name, in: current))
        var out = current
        out.replaceSubrange(at.start..<at.end, with: try record(oldName, in: old))
        return out
    }

    func rolledBackEntry(_ name: String) -> String {
        "entry '\(name)' in the vault \(indexPath) is not the copy the vault last sealed: an older copy of it was put in its place outside hubscript, so its value may be old (a rotated secret come back). Set it again ('hubscript vault set \(name)'), remove it ('hubscript vault rm \(name)'), or, if you restored it on purpose, accept the vault as it is with 'hubscript vault reseal'"
    }

    // MARK: One entry

    func testAnOlderSealedCopyOfOneEntrySplicedIntoTheVaultIsRefusedAtEveryOpen() throws {
        let vault = try makeVault([("api/key", "first-key"), ("db/password", "hunter2")])
        let old = try fileBytes()
        try set(vault, "api/key", "rotated-key")
        try writeFile(try splice("api/key", in: try fileBytes(), with: "api/key", from: old))
        // The old copy still authenticates on its own: only the index as a whole tells.
        assertVaultError(.entryRolledBack, rolledBackEntry("api/key")) { try open() }
        assertVaultError(.entryRolledBack, rolledBackEntry("api/key")) { try openRemembering() }
    }

    func testAnEntryOfAnyPositionAndKindIsCoveredNotOnlyTheFirst() throws {
        let vault = try makeVault([("a", "1"), ("b", "2"), ("c", "3")])
        let writer = try vault.makeObjectWriter(name: "report")
        try writer.write(Array("object one".utf8))
        try writer.finish()
        let old = try fileBytes()
        try set(vault, "c", "33")
        let second = try vault.makeObjectWriter(name: "report")
        try second.write(Array("object two".utf8))
        try second.finish()
        let current = try fileBytes()
        for name in ["c", "report"] {
            try writeFile(try splice(name, in: current, with: name, from: old))
            assertVaultError(.entryRolledBack, rolledBackEntry(name)) { try open() }
        }
        // Unchanged entries spliced from the older copy are the same bytes: accepted.
        try writeFile(try splice("a", in: current, with: "a", from: old))
        XCTAssertEqual(text(try open().secret(named: "a")), "1")
    }

    func testAnEntryRemovedAndBroughtBackFromAnOlderCopyIsRefused() throws {
        let vault = try makeVault([("keep", "1"), ("gone", "2")])
        let old = try fileBytes()
        try vault.remove("gone")
        try set(vault, "new", "3")
        // The same count of entries: the removed one put where the new one is.
        try writeFile(try splice("new", in: try fileBytes(), with: "gone", from: old))
        assertVaultError(.entryAdded, "entry 'gone' in the vault \(indexPath) is not in the vault's sealed index: it was put in outside hubscript (perhaps a removed entry brought back from an older copy of the vault). Remove it ('hubscript vault rm gone'), or, if you restored it on purpose, accept the vault as it is with 'hubscript vault reseal'") {
            try open()
        }
        // Removing it names what else is missing: the entry it took the place of.
        assertVaultError(.entryRemoved, "entry 'new' is missing from the vault \(indexPath): the vault's sealed index lists it, so it was taken out outside hubscript. Restore the vault from a backup, or, if you restored it on purpose, accept the vault as it is with 'hubscript vault reseal'") {
            try Vault.open(at: vaultFolder, key: .key(try key()), options: options(), policy: .allowEntry("gone"))
        }
    }

    func testASplicedEntryCanBeSetAgainOrRemovedAndThenTheVaultOpens() throws {
        let vault = try makeVault([("api/key", "first"), ("other", "x")])
        let old = try fileBytes()
        try set(vault, "api/key", "second")
        let spliced = try splice("api/key", in: try fileBytes(), with: "api/key", from: old)
        try writeFile(spliced)
        // Another entry cannot be changed while one is spliced.
        let allowOther = try? Vault.open(at: vaultFolder, key: .key(try key()), options: options(), policy: .allowEntry("other"))
        XCTAssertNil(allowOther)
        let setting = try Vault.open(at: vaultFolder, key: .key(try key()), options: options(), policy: .allowEntry("api/key"))
        try set(setting, "api/key", "third")
        XCTAssertEqual(text(try open().secret(named: "api/key")), "third")
        try writeFile(spliced)
        try Vault.open(at: vaultFolder, key: .key(try key()), options: options(), policy: .allowEntry("api/key")).remove("api/key")
        XCTAssertEqual(try open().list().map(\.name), ["other"])
    }

    func testAnAlteredIndexSealIsTamperedAndBytesAfterItAreCorrupt() throws {
        _ = try makeVault([("a", "1")])
        let good = try fileBytes()
        var bad = good
        bad[bad.count - 1] ^= 1
        try writeFile(bad)
        assertVaultError(.tampered, "the index seal of the vault \(indexPath) failed authentication: its header or seal was altered outside hubscript. Restore the vault from a backup; or, if every entry is as you expect, accept it with 'hubscript vault reseal'") {
            try open()
        }
        try writeFile(good + [0])
        assertVaultError(.corrupt, "the vault \(indexPath) has 1 unexpected bytes after its index seal") { try open() }
        try writeFile(Array(good.dropLast(3)))
        assertVaultError(.truncated, "the vault \(indexPath) is truncated (\(good.count - 3) bytes; it ends inside its index seal): restore it from a backup") {
            try open()
        }
    }

    /// Any one byte of a format-2 file changed: the open fails with a vault error, or
    /// (a change the format ignores: none today) every value still reads as written.
    func testEveryByteOfTheFileIsCovered() throws {
        let vault = try makeVault([("a", "1"), ("bb", "22")])
        let writer = try vault.makeObjectWriter(name: "report")
        try writer.write(Array("object".utf8))
        try writer.finish()
        let good = try fileBytes()
        var opened: [Int] = []
        for offset in 0..<good.count {
            var bad = good
            bad[offset] ^= 0x20
            try writeFile(bad)
            guard let reopened = try? open() else { continue }
            // The open succeeded: reading every entry must fail or give the true value.
            opened.append(offset)
            for (name, value) in [("a", "1"), ("bb", "22")] {
                if let secret = try? reopened.secret(named: name) { XCTAssertEqual(text(secret), value, "byte \(offset)") }
            }
            XCTAssertThrowsError(try reopened.verify(), "byte \(offset): a changed file verified")
        }
        // Only bytes an entry's own seal covers (it is refused when read) can open.
        for offset in opened {
            XCTAssertNotNil(["a", "bb", "report"].first { name in
                guard let range = recordOffset(name, in: good) else { return false }
                return (range.start..<range.end).contains(offset)
            }, "byte \(offset) outside every entry opened")
        }
    }

    // MARK: The whole file

    func rolledBack(found: String, seen: UInt64) -> String {
        "the vault \(indexPath) was rolled back: it \(found), but this machine has seen generation \(seen) of it (remembered in \(memoryFolder.path)/\(try! openAccepting().id)). An older copy of the whole vault was put in its place (a restored backup, a sync conflict, or someone reverting a rotated secret), so its values may be old. Put the newest copy back; or, if you restored this copy on purpose, accept it with 'hubscript vault reseal'"
    }

    func openAccepting() throws -> Vault { try openRemembering(policy: .accept) }

    func testAWholeVaultRolledBackIsRefusedUntilResealed() throws {
        let vault = try Vault.create(at: vaultFolder, key: .key(try key()), options: remembering())
        try set(vault, "api/key", "first")
        XCTAssertEqual(vault.generation, 2)
        let old = try fileBytes()
        try set(vault, "api/key", "rotated")
        try set(vault, "other", "x")
        XCTAssertEqual(try memory.remembered(vaultID: vault.index.header.vaultID), 4)
        try writeFile(old)
        let message = rolledBack(found: "is at generation 2", seen: 4)
        assertVaultError(.rolledBack, message) { try openRemembering() }
        // Writes are refused too (they re-read the file under the lock).
        assertVaultError(.rolledBack, message) { try set(vault, "api/key", "more") }
        // Without this machine's memory the copy is consistent in itself: it opens.
        XCTAssertEqual(text(try open().secret(named: "api/key")), "first")
        // A restore on purpose: reseal seals it above anything seen.
        XCTAssertEqual(try openAccepting().reseal(), 5)
        XCTAssertEqual(text(try openRemembering().secret(named: "api/key")), "first")
        XCTAssertEqual(try memory.remembered(vaultID: vault.index.header.vaultID), 5)
    }

    func testOpeningAVaultWrittenElsewhereRaisesWhatIsRemembered() throws {
        let vault = try makeVault([("a", "1")])   // written without memory: generation 2
        XCTAssertNil(try memory.remembered(vaultID: vault.index.header.vaultID))
        XCTAssertEqual(try openRemembering().generation, 2)
        XCTAssertEqual(try memory.remembered(vaultID: vault.index.header.vaultID), 2)
        try set(vault, "a", "2")   // another machine's write
        XCTAssertEqual(try openRemembering().generation, 3)
        XCTAssertEqual(try memory.remembered(vaultID: vault.index.header.vaultID), 3)
    }

    // MARK: The memory file

    func testADamagedGenerationRecordIsRefusedClearlyAndResealReplacesIt() throws {
        let vault = try Vault.create(at: vaultFolder, key: .key(try key()), options: remembering())
        try set(vault, "a", "1")
        let path = memoryFolder.appendingPathComponent(vault.id).path
        let valid = try fileBytes(path)
        let id = vault.id
        for (bytes, what) in [([UInt8](), "it is empty"),
                              (Array("\(id) 9 0000000000000000\n".utf8), "its contents are not a generation this build wrote"),
                              (Array(valid.dropLast()), "its contents are not a generation this build wrote"),
                              (valid.map { $0 == UInt8(ascii: "2") ? UInt8(ascii: "7") : $0 }, "its contents are not a generation this build wrote"),
                              ([UInt8](repeating: 0x41, count: 300), "it is over 256 bytes")] {
            try writeFile(bytes, path)
            assertVaultError(.generationMemoryDamaged, "the record of this vault's generation, \(path), is damaged (\(what)), so hubscript cannot tell whether the vault was rolled back to an older copy. If the vault is the copy you expect, accept it with 'hubscript vault reseal' (or remove that file)") {
                try openRemembering()
            }
        }
        unlink(path)
        XCTAssertEqual(mkfifo(path, 0o600), 0)
        assertVaultError(.generationMemoryDamaged, "the record of this vault's generation, \(path), is damaged (it is not a regular file), so hubscript cannot tell whether the vault was rolled back to an older copy. If the vault is the copy you expect, accept it with 'hubscript vault reseal' (or remove that file)") {
            try openRemembering()
        }
        unlink(path)
        try writeFile([0x41], path)
        XCTAssertEqual(try openAccepting().reseal(), 3)
        XCTAssertEqual(try memory.remembered(vaultID: vault.index.header.vaultID), 3)
        XCTAssertEqual(text(try openRemembering().secret(named: "a")), "1")
    }

    /// A crash at any point of a write leaves the memory at or behind the file.
    func testTheMemoryIsRaisedOnlyAfterTheFileIsDurable() throws {
        let events = Events()
        let vault = try Vault.create(at: vaultFolder, key: .key(try key()), options: remembering { events.add($0) })
        try set(vault, "a", "1")
        let order = events.all.filter { $0.hasPrefix("index.") || $0.hasPrefix("generation.") }
        let lastIndex = try XCTUnwrap(order.lastIndex(of: "index.folder-synced"))
        let firstMemory = try XCTUnwrap(order.lastIndex(of: "generation.temp-created"))
        XCTAssertLessThan(lastIndex, firstMemory, "\(order)")
        XCTAssertEqual(order.suffix(6), ["generation.temp-created", "generation.temp-partial", "generation.temp-written",
                                         "generation.temp-synced", "generation.renamed", "generation.folder-synced"])
    }

    // MARK: Format 1

    func testAFormat1VaultOpensAndIsMigratedOnTheNextWrite() throws {
        try FileManager.default.createDirectory(at: vaultFolder.appendingPathComponent("objects"), withIntermediateDirectories: true)
        let legacy = try XCTUnwrap(hexBytes(FormatKnownAnswerTests.legacyHex))
        try writeFile(legacy)
        let opened = try openRemembering()
        XCTAssertEqual(opened.formatVersion, 1)
        XCTAssertEqual(opened.generation, 0)
        XCTAssertEqual(text(try opened.secret(named: "db/password")), "hunter2")
        XCTAssertEqual(try opened.verify().secrets, 1)
        XCTAssertEqual(try fileBytes(), legacy, "opening writes nothing")
        try set(opened, "api/key", "k")
        let migrated = try fileBytes()
        XCTAssertEqual(Array(migrated[8..<10]), [2, 0])
        let again = try openRemembering()
        XCTAssertEqual(again.formatVersion, 2)
        XCTAssertEqual(again.generation, 1)
        XCTAssertEqual(text(try again.secret(named: "db/password")), "hunter2")
        XCTAssertEqual(try again.list().map(\.created), try again.list().map { _ in Date(timeIntervalSince1970: Self.now) })
        // The format-1 file put back is a whole-vault rollback.
        try writeFile(legacy)
        assertVaultError(.rolledBack, rolledBack(found: "is in format 1 (written before generations were counted)", seen: 1)) {
            try openRemembering()
        }
    }

    func hexBytes(_ hex: String) -> [UInt8]? {
        var out: [UInt8] = []
        var chars = Array(hex.utf8)[...]
        while chars.count >= 2 {
            guard let b = UInt8(String(decoding: chars.prefix(2), as: UTF8.self), radix: 16) else { return nil }
            out.append(b)
            chars = chars.dropFirst(2)
        }
        return chars.isEmpty ? out : nil
    }
}

/// Checkpoints heard, in order.
final class Events: @unchecked Sendable {
    private let lock = NSLock()
    private var events: [String] = []
    func add(_ e: String) { lock.withLock { events.append(e) } }
    var all: [String] { lock.withLock { events } }
}
