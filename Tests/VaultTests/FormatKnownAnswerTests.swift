import CSodium
import Foundation
import XCTest
@testable import Vault

/// docs/vault-format.md, byte for byte: a vault made with a fixed key, fixed "random"
/// bytes (0x01, 0x02, …) and a fixed clock must be exactly these bytes, and each part
/// must be what the document says — checked here with libsodium directly, not with
/// the module's own parser.
final class FormatKnownAnswerTests: VaultTestCase {
    /// Key 00…1f; vault id 01…10; key-check nonce 11…28 then (after the set) 41…58;
    /// the entry's nonce 29…40; clock 2026-01-01T00:00:00Z; secret "db/password" =
    /// "hunter2". The two sealed parts (key-check tag, entry) are pinned as this build
    /// made them; the next test opens them with libsodium and the documented layout.
    static let expectedHex = """
    4855425641554c5401000100\
    0102030405060708090a0b0c0d0e0f10\
    0000000000000000\
    0000000000000000\
    00000000000000000000000000000000\
    01000000\
    4142434445464748494a4b4c4d4e4f505152535455565758\
    59eea9a8037377c9e63949e7c36f72bf\
    0100\
    0b00\
    64622f70617373776f7264\
    00b9556900000000\
    00b9556900000000\
    292a2b2c2d2e2f303132333435363738393a3b3c3d3e3f40\
    17000000\
    fc816169df37b1cb1c1416f1ca00d1f5b39e926ec728a7
    """

    func makeKnownVault() throws -> [UInt8] {
        _ = try makeVault([("db/password", "hunter2")], random: CountingRandom())
        return try fileBytes()
    }

    func testARawKeyVaultIsByteExact() throws {
        let bytes = try makeKnownVault()
        XCTAssertEqual(Sodium.hex(bytes), Self.expectedHex)
        XCTAssertEqual(bytes.count, 104 + 4 + 11 + 16 + 24 + 4 + 23)
    }

    func testTheKeyCheckAndTheEntryOpenWithTheDocumentedAssociatedData() throws {
        let bytes = try makeKnownVault()
        let key = (0..<32).map { UInt8($0) }
        // Key check: no plaintext, AD "hubscript-vault/key-check\0" + bytes 0..<64.
        let checkAD = Array("hubscript-vault/key-check".utf8) + [0] + bytes[0..<64]
        var empty = [UInt8](repeating: 0, count: 1)
        var length: UInt64 = 0
        XCTAssertEqual(crypto_aead_xchacha20poly1305_ietf_decrypt(&empty, &length, nil, Array(bytes[88..<104]), 16, checkAD,
                                                                  UInt64(checkAD.count), Array(bytes[64..<88]), key), 0)
        XCTAssertEqual(length, 0)
        // The entry: AD "hubscript-vault/entry\0" + vault id + version + kind + name
        // length + name + created + updated.
        let name = Array("db/password".utf8)
        let entryAD = Array("hubscript-vault/entry".utf8) + [0] + bytes[12..<28] + [1, 0, 1, 11, 0] + name
            + [0x00, 0xB9, 0x55, 0x69, 0, 0, 0, 0] + [0x00, 0xB9, 0x55, 0x69, 0, 0, 0, 0]
        let nonce = Array(bytes[135..<159])
        let sealed = Array(bytes[163..<186])
        var plain = [UInt8](repeating: 0, count: 7)
        XCTAssertEqual(crypto_aead_xchacha20poly1305_ietf_decrypt(&plain, &length, nil, sealed, UInt64(sealed.count), entryAD,
                                                                  UInt64(entryAD.count), nonce, key), 0)
        XCTAssertEqual(String(decoding: plain, as: UTF8.self), "hunter2")
        XCTAssertEqual(Int64(Self.now), 0x6955_B900)
    }

    func testAPassphraseHeaderStoresItsSaltAndCostsAndDerivesWithArgon2id() throws {
        let passphrase = "correct horse battery staple"
        let kdf = VaultKDF(opsLimit: 1, memLimit: 8192)
        _ = try Vault.create(at: vaultFolder, key: .passphrase(try SecretBytes(copying: Array(passphrase.utf8))), kdf: kdf,
                             options: options(random: CountingRandom()))
        let bytes = try fileBytes()
        XCTAssertEqual(bytes.count, 104)
        XCTAssertEqual(Sodium.hex(Array(bytes[0..<12])), "4855425641554c5401000200")   // magic, version 1, kind 2
        XCTAssertEqual(Sodium.hex(Array(bytes[12..<28])), "0102030405060708090a0b0c0d0e0f10")   // vault id
        XCTAssertEqual(Sodium.hex(Array(bytes[28..<44])), "0100000000000000" + "0020000000000000")   // ops 1, mem 8192
        XCTAssertEqual(Sodium.hex(Array(bytes[44..<60])), "1112131415161718191a1b1c1d1e1f20")   // salt
        XCTAssertEqual(Sodium.hex(Array(bytes[60..<64])), "00000000")
        var key = [UInt8](repeating: 0, count: 32)
        XCTAssertEqual(crypto_pwhash(&key, 32, passphrase, UInt64(passphrase.utf8.count), Array(bytes[44..<60]), 1, 8192,
                                     crypto_pwhash_alg_argon2id13()), 0)
        let checkAD = Array("hubscript-vault/key-check".utf8) + [0] + bytes[0..<64]
        var empty = [UInt8](repeating: 0, count: 1)
        var length: UInt64 = 0
        XCTAssertEqual(crypto_aead_xchacha20poly1305_ietf_decrypt(&empty, &length, nil, Array(bytes[88..<104]), 16, checkAD,
                                                                  UInt64(checkAD.count), Array(bytes[64..<88]), key), 0)
        let opened = try Vault.open(at: vaultFolder, key: .passphrase(try SecretBytes(copying: Array(passphrase.utf8))), options: options())
        XCTAssertEqual(opened.kdf, kdf)
        assertVaultError(.badKey, "the vault \(indexPath) opens with a passphrase (--passphrase or HUBSCRIPT_VAULT_PASSPHRASE), not a key") {
            try Vault.open(at: vaultFolder, key: .key(try SecretBytes(copying: key)), options: options())
        }
    }

    func testAnObjectFileIsItsDocumentedLayoutAndItsIdIsTheSHA256OfTheFile() throws {
        let vault = try makeVault()
        let plaintext = (0..<2500).map { UInt8(truncatingIfNeeded: $0 * 7) }
        let writer = try vault.makeObjectWriter(name: "reports/r1")
        try writer.write(plaintext)
        let info = try writer.finish()
        let file = try fileBytes(vaultFolder.appendingPathComponent("objects/\(info.id)").path)
        // 40-byte header, two full 1 KiB chunks (+17 each), the last 452 bytes (+17).
        XCTAssertEqual(file.count, 40 + 2 * (1024 + 17) + 452 + 17)
        XCTAssertEqual(Sodium.hex(Array(file[0..<16])), "485542564f424a00" + "0100" + "0000" + "00040000")
        var digest = [UInt8](repeating: 0, count: 32)
        XCTAssertEqual(crypto_hash_sha256(&digest, file, UInt64(file.count)), 0)
        XCTAssertEqual(info.id, "obj_" + Sodium.hex(digest))
        XCTAssertEqual(info.size, 2500)
        // The file key is in the entry: decrypt the stream with libsodium directly.
        let record = try vault.object("reports/r1").record
        let fileKey = try record.fileKey()
        var state = crypto_secretstream_xchacha20poly1305_state()
        XCTAssertEqual(fileKey.withUnsafeBytes { crypto_secretstream_xchacha20poly1305_init_pull(&state, Array(file[16..<40]), $0.baseAddress!.assumingMemoryBound(to: UInt8.self)) }, 0)
        var out: [UInt8] = []
        var offset = 40
        var tags: [UInt8] = []
        while offset < file.count {
            let end = min(offset + 1024 + 17, file.count)
            var chunk = [UInt8](repeating: 0, count: 1024)
            var length: UInt64 = 0
            var tag: UInt8 = 0
            XCTAssertEqual(crypto_secretstream_xchacha20poly1305_pull(&state, &chunk, &length, &tag, Array(file[offset..<end]),
                                                                      UInt64(end - offset), Array(file[0..<16]), 16), 0)
            out += chunk[0..<Int(length)]
            tags.append(tag)
            offset = end
        }
        XCTAssertEqual(out, plaintext)
        XCTAssertEqual(tags, [0, 0, 3])   // MESSAGE, MESSAGE, FINAL
    }
}
