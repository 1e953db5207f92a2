import CSodium
import Foundation
import XCTest
@testable import Vault

/// docs/vault-format.md, byte for byte: a vault made with a fixed key, fixed "random"
/// bytes (0x01, 0x02, …) and a fixed clock must be exactly these bytes, and each part
/// must be what the document says — checked here with libsodium directly, not with
/// the module's own parser.
final class FormatKnownAnswerTests: VaultTestCase {
    /// Key 00…1f; vault id 01…10; clock 2026-01-01T00:00:00Z; secret "db/password" =
    /// "hunter2". `init` draws the key-check nonce 11…28 and the seal nonce 29…40;
    /// the set draws the entry's nonce 41…58, the key-check nonce 59…70, the seal
    /// nonce 71…88. The sealed parts (key-check tag, entry, index seal) are pinned as
    /// this build made them; the next test opens them with libsodium and the
    /// documented layout.
    static let expectedHex = """
    4855425641554c5402000100\
    0102030405060708090a0b0c0d0e0f10\
    0000000000000000\
    0000000000000000\
    00000000000000000000000000000000\
    01000000\
    0200000000000000\
    595a5b5c5d5e5f606162636465666768696a6b6c6d6e6f70\
    161187924d8d9a9c79161b11e4296ed3\
    0100\
    0b00\
    64622f70617373776f7264\
    00b9556900000000\
    00b9556900000000\
    4142434445464748494a4b4c4d4e4f505152535455565758\
    17000000\
    867551600337dce1d9dc85a634d049930246739442db2b\
    7172737475767778797a7b7c7d7e7f808182838485868788\
    3d000000\
    53d3606dcac434ffab06474b809dcb2f8db57254d5b26e03fa6522babeb32957\
    2090fb7b20eab7c13415ae4622ccd7ea8eb92c6eac5dc570e4f75550c6
    """

    /// The same vault in format 1, as builds before the index seal wrote it (key
    /// 00…1f; vault id 01…10; key-check nonce 41…58; the entry's nonce 29…40): what
    /// RollbackTests opens and migrates.
    static let legacyHex = """
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
        XCTAssertEqual(bytes.count, 112 + (4 + 11 + 16 + 24 + 4 + 23) + (24 + 4 + 2 + 11 + 32 + 16))
    }

    func testTheKeyCheckTheEntryAndTheIndexSealOpenWithTheDocumentedAssociatedData() throws {
        let bytes = try makeKnownVault()
        let key = (0..<32).map { UInt8($0) }
        func open(_ sealed: ArraySlice<UInt8>, ad: [UInt8], nonce: ArraySlice<UInt8>) -> [UInt8]? {
            var plain = [UInt8](repeating: 0, count: max(sealed.count - 16, 1))
            var length: UInt64 = 0
            guard crypto_aead_xchacha20poly1305_ietf_decrypt(&plain, &length, nil, Array(sealed), UInt64(sealed.count), ad,
                                                             UInt64(ad.count), Array(nonce), key) == 0 else { return nil }
            return Array(plain[0..<Int(length)])
        }
        // The generation (2: init, then the set) after the entry count.
        XCTAssertEqual(Array(bytes[64..<72]), [2, 0, 0, 0, 0, 0, 0, 0])
        // Key check: no plaintext, AD "hubscript-vault/key-check\0" + bytes 0..<72.
        let header = Array(bytes[0..<72])
        XCTAssertEqual(open(bytes[96..<112], ad: Array("hubscript-vault/key-check".utf8) + [0] + header, nonce: bytes[72..<96]), [])
        // The entry: AD "hubscript-vault/entry\0" + vault id + version + kind + name
        // length + name + created + updated.
        let name = Array("db/password".utf8)
        let entryAD = Array("hubscript-vault/entry".utf8) + [0] + bytes[12..<28] + [2, 0, 1, 11, 0] + name
            + [0x00, 0xB9, 0x55, 0x69, 0, 0, 0, 0] + [0x00, 0xB9, 0x55, 0x69, 0, 0, 0, 0]
        XCTAssertEqual(open(bytes[171..<194], ad: entryAD, nonce: bytes[143..<167]).map { String(decoding: $0, as: UTF8.self) }, "hunter2")
        XCTAssertEqual(Int64(Self.now), 0x6955_B900)
        // The index seal: the entry list (name length, name, SHA-256 of the record's
        // bytes), AD "hubscript-vault/index\0" + bytes 0..<72.
        XCTAssertEqual(Array(bytes[218..<222]), [61, 0, 0, 0])
        var digest = [UInt8](repeating: 0, count: 32)
        XCTAssertEqual(crypto_hash_sha256(&digest, Array(bytes[112..<194]), 82), 0)
        XCTAssertEqual(open(bytes[222..<283], ad: Array("hubscript-vault/index".utf8) + [0] + header, nonce: bytes[194..<218]),
                       [11, 0] + name + digest)
    }

    func testAPassphraseHeaderStoresItsSaltAndCostsAndDerivesWithArgon2id() throws {
        let passphrase = "correct horse battery staple"
        let kdf = VaultKDF(opsLimit: 1, memLimit: 8192)
        _ = try Vault.create(at: vaultFolder, key: .passphrase(try SecretBytes(copying: Array(passphrase.utf8))), kdf: kdf,
                             options: options(random: CountingRandom()))
        let bytes = try fileBytes()
        XCTAssertEqual(bytes.count, 112 + 24 + 4 + 16)   // the header, an empty index seal
        XCTAssertEqual(Sodium.hex(Array(bytes[0..<12])), "4855425641554c5402000200")   // magic, version 2, kind 2
        XCTAssertEqual(Sodium.hex(Array(bytes[12..<28])), "0102030405060708090a0b0c0d0e0f10")   // vault id
        XCTAssertEqual(Sodium.hex(Array(bytes[28..<44])), "0100000000000000" + "0020000000000000")   // ops 1, mem 8192
        XCTAssertEqual(Sodium.hex(Array(bytes[44..<60])), "1112131415161718191a1b1c1d1e1f20")   // salt
        XCTAssertEqual(Sodium.hex(Array(bytes[60..<64])), "00000000")
        var key = [UInt8](repeating: 0, count: 32)
        XCTAssertEqual(crypto_pwhash(&key, 32, passphrase, UInt64(passphrase.utf8.count), Array(bytes[44..<60]), 1, 8192,
                                     crypto_pwhash_alg_argon2id13()), 0)
        XCTAssertEqual(Sodium.hex(Array(bytes[64..<72])), "0100000000000000")   // generation 1
        let checkAD = Array("hubscript-vault/key-check".utf8) + [0] + bytes[0..<72]
        var empty = [UInt8](repeating: 0, count: 1)
        var length: UInt64 = 0
        XCTAssertEqual(crypto_aead_xchacha20poly1305_ietf_decrypt(&empty, &length, nil, Array(bytes[96..<112]), 16, checkAD,
                                                                  UInt64(checkAD.count), Array(bytes[72..<96]), key), 0)
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
