import Foundation
import XCTest
@testable import Vault

/// rotate-key: every entry re-sealed, objects' files untouched, the old key refused.
final class RotationTests: VaultTestCase {
    func testAfterRotationTheOldKeyIsRefusedAndTheNewOneReadsEverything() throws {
        let vault = try makeVault([("db/password", "hunter2"), ("api/key", "k")])
        let info = try vault.putObject(file: try sample(3000), name: "reports/r1")
        let objectFile = vaultFolder.appendingPathComponent("objects/\(info.id)").path
        let objectBytes = try fileBytes(objectFile)
        XCTAssertEqual(try vault.rotateKey(to: .key(try key(100))), 3)
        assertVaultError(.wrongKey, "wrong key: the vault \(indexPath) does not open with the key (nothing was read or changed)") { try open() }
        let rotated = try open(key: 100)
        XCTAssertEqual(text(try rotated.secret(named: "db/password")), "hunter2")
        XCTAssertEqual(text(try rotated.secret(named: "api/key")), "k")
        XCTAssertEqual(try fileBytes(objectFile), objectBytes, "the object file is not rewritten")
        var out: [UInt8] = []
        try rotated.readObject("reports/r1") { out += $0 }
        XCTAssertEqual(out, try fileBytes(root.appendingPathComponent("sample").path))
        XCTAssertEqual(try rotated.list().map(\.name), ["api/key", "db/password", "reports/r1"])
        XCTAssertEqual(rotated.id, vault.id)
        // The vault object that rotated keeps working with the new key.
        XCTAssertEqual(try vault.setSecret("later", value: try SecretBytes(copying: [1])), .created)
    }

    func testRotatingFromAKeyToAPassphraseAndBack() throws {
        let vault = try makeVault([("a", "1")])
        let kdf = VaultKDF(opsLimit: 1, memLimit: 8192)
        try vault.rotateKey(to: .passphrase(try SecretBytes(copying: Array("pass phrase".utf8))), kdf: kdf)
        let byPassphrase = try Vault.open(at: vaultFolder, key: .passphrase(try SecretBytes(copying: Array("pass phrase".utf8))), options: options())
        XCTAssertEqual(byPassphrase.kdf, kdf)
        XCTAssertEqual(text(try byPassphrase.secret(named: "a")), "1")
        try byPassphrase.rotateKey(to: .key(try key(7)))
        XCTAssertEqual(text(try open(key: 7).secret(named: "a")), "1")
    }

    func testRotatingToTheSameKeyIsRefused() throws {
        let vault = try makeVault([("a", "1")])
        let before = try fileBytes()
        assertVaultError(.badKey, "the new key is the vault's current key: nothing to rotate") { try vault.rotateKey(to: .key(try key())) }
        XCTAssertEqual(try fileBytes(), before)
    }

    func sample(_ count: Int) throws -> String {
        let path = root.appendingPathComponent("sample").path
        try writeFile((0..<count).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 7) }, path)
        return path
    }
}
