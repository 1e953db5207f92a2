import Foundation
import XCTest
@testable import Vault

/// Entries are bound to their name, dates and vault: swapping, renaming, redating or
/// moving one between vaults fails authentication and names the entry.
final class BindingTests: VaultTestCase {
    func tamperedMessage(_ name: String) -> String {
        "entry '\(name)' in the vault \(indexPath) failed authentication: it was altered, moved or renamed (restore the vault from a backup, or remove the entry)"
    }

    func testSwappingTwoEntriesValuesIsDetected() throws {
        // Names and values of equal length, so the records can trade places in the file.
        _ = try makeVault([("aa", "one"), ("bb", "two")])
        var bytes = try fileBytes()
        let a = try XCTUnwrap(recordOffset("aa", in: bytes)), b = try XCTUnwrap(recordOffset("bb", in: bytes))
        let first = Array(bytes[a.nonce..<a.end]), second = Array(bytes[b.nonce..<b.end])
        bytes.replaceSubrange(a.nonce..<a.end, with: second)
        bytes.replaceSubrange(b.nonce..<b.end, with: first)
        try writeFile(bytes)
        let vault = try open()
        assertVaultError(.tampered, tamperedMessage("aa")) { try vault.secret(named: "aa") }
        assertVaultError(.tampered, tamperedMessage("bb")) { try vault.secret(named: "bb") }
    }

    func testRenamingAnEntryIsDetected() throws {
        _ = try makeVault([("aa", "one")])
        var bytes = try fileBytes()
        let a = try XCTUnwrap(recordOffset("aa", in: bytes))
        bytes[a.start + 5] = UInt8(ascii: "b")   // "aa" → "ab"
        try writeFile(bytes)
        let vault = try open()
        assertVaultError(.tampered, tamperedMessage("ab")) { try vault.secret(named: "ab") }
    }

    func testChangingAnEntrysDateIsDetected() throws {
        _ = try makeVault([("aa", "one")])
        var bytes = try fileBytes()
        let a = try XCTUnwrap(recordOffset("aa", in: bytes))
        bytes[a.start + 4 + 2 + 8] ^= 1   // updated
        try writeFile(bytes)
        assertVaultError(.tampered, tamperedMessage("aa")) { try open().list() }
    }

    func testAnEntryMovedFromAnotherVaultWithTheSameKeyIsDetected() throws {
        _ = try makeVault([("aa", "one")])
        let other = root.appendingPathComponent("other")
        _ = try Vault.create(at: other, key: .key(try key()), options: options()).setSecret("aa", value: try SecretBytes(copying: Array("two".utf8)))
        let otherBytes = try fileBytes(other.appendingPathComponent(Vault.indexFileName).path)
        var bytes = try fileBytes()
        let mine = try XCTUnwrap(recordOffset("aa", in: bytes)), theirs = try XCTUnwrap(recordOffset("aa", in: otherBytes))
        bytes.replaceSubrange(mine.start..<mine.end, with: otherBytes[theirs.start..<theirs.end])
        try writeFile(bytes)
        assertVaultError(.tampered, tamperedMessage("aa")) { try open().secret(named: "aa") }
    }

    func testDroppingAnEntryAndItsCountFailsTheKeyCheck() throws {
        _ = try makeVault([("aa", "one"), ("bb", "two")])
        var bytes = try fileBytes()
        let b = try XCTUnwrap(recordOffset("bb", in: bytes))
        bytes.removeSubrange(b.start..<b.end)
        bytes[60] = 1
        try writeFile(bytes)
        assertVaultError(.wrongKey, "wrong key: the vault \(indexPath) does not open with the key (nothing was read or changed)") { try open() }
    }
}
