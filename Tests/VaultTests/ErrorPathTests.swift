import Foundation
import XCTest
@testable import Vault

/// Every way opening or changing a vault can fail: the exact error, and the file left
/// byte for byte as it was.
final class ErrorPathTests: VaultTestCase {
    func testAWrongKeyIsRefusedUpFrontAndChangesNothing() throws {
        _ = try makeVault([("db/password", "hunter2")])
        let before = try fileBytes()
        assertVaultError(.wrongKey, "wrong key: the vault \(indexPath) does not open with the key (nothing was read or changed)") {
            try open(key: 1)
        }
        XCTAssertEqual(try fileBytes(), before)
    }

    func testAWrongPassphraseIsRefused() throws {
        let kdf = VaultKDF(opsLimit: 1, memLimit: 8192)
        _ = try Vault.create(at: vaultFolder, key: .passphrase(try SecretBytes(copying: Array("right".utf8))), kdf: kdf, options: options())
        assertVaultError(.wrongKey, "wrong key: the vault \(indexPath) does not open with the passphrase (nothing was read or changed)") {
            try Vault.open(at: vaultFolder, key: .passphrase(try SecretBytes(copying: Array("wrong".utf8))), options: options())
        }
        assertVaultError(.badKey, "the vault \(indexPath) opens with a passphrase (--passphrase or HUBSCRIPT_VAULT_PASSPHRASE), not a key") {
            try open()
        }
    }

    func testAPassphraseForARawKeyVaultIsRefused() throws {
        _ = try makeVault()
        assertVaultError(.badKey, "the vault \(indexPath) opens with a key (a key file or HUBSCRIPT_VAULT_KEY), not a passphrase") {
            try Vault.open(at: vaultFolder, key: .passphrase(try SecretBytes(copying: Array("x".utf8))), options: options())
        }
    }

    func testAKeyUsedSinceAnotherProcessRotatedTheVaultIsRefused() throws {
        let first = try makeVault([("a", "1")])
        try open().rotateKey(to: .key(try key(9)))
        let before = try fileBytes()
        assertVaultError(.wrongKey, "wrong key: the vault \(indexPath) no longer opens with the key (was its key rotated?); nothing was changed") {
            try first.setSecret("b", value: try SecretBytes(copying: [1]))
        }
        XCTAssertEqual(try fileBytes(), before)
    }

    func testATamperedEntryIsNamedAndBlocksWritesButNotItsOwnRemoval() throws {
        _ = try makeVault([("db/password", "hunter2"), ("api/key", "k")])
        var bytes = try fileBytes()
        let record = try XCTUnwrap(recordOffset("db/password", in: bytes))
        bytes[record.sealed + 2] ^= 0x01
        try writeFile(bytes)
        let vault = try open()
        let message = "entry 'db/password' in the vault \(indexPath) failed authentication: it was altered, moved or renamed (restore the vault from a backup, or remove the entry)"
        assertVaultError(.tampered, message) { try vault.secret(named: "db/password") }
        XCTAssertEqual(text(try vault.secret(named: "api/key")), "k")
        assertVaultError(.tampered, message) { try vault.list() }
        assertVaultError(.tampered, message) { try vault.setSecret("other", value: try SecretBytes(copying: [1])) }
        assertVaultError(.tampered, message) { try vault.rotateKey(to: .key(try self.key(5))) }
        XCTAssertEqual(try fileBytes(), bytes)
        XCTAssertEqual(try vault.remove("db/password"), .secret)
        XCTAssertEqual(try open().list().map(\.name), ["api/key"])
    }

    func testEveryTruncationOfAVaultFileIsRefusedCleanly() throws {
        _ = try makeVault([("db/password", "hunter2"), ("api/key", "k")])
        let bytes = try fileBytes()
        for length in 0..<bytes.count {
            try writeFile(Array(bytes[0..<length]))
            do {
                _ = try open()
                XCTFail("a vault cut to \(length) of \(bytes.count) bytes opened")
            } catch let error as VaultError {
                XCTAssertEqual(error.code, .truncated, "at \(length): \(error.message)")
            }
        }
        try writeFile(Array(bytes[0..<50]))
        assertVaultError(.truncated, "the vault \(indexPath) is truncated (50 bytes; it ends inside its header): restore it from a backup") { try open() }
        try writeFile(Array(bytes[0..<(bytes.count - 1)]))
        assertVaultError(.truncated, "the vault \(indexPath) is truncated (\(bytes.count - 1) bytes; it ends inside its index seal): restore it from a backup") { try open() }
        let second = try XCTUnwrap(recordOffset("api/key", in: bytes))
        try writeFile(Array(bytes[0..<(second.end - 1)]))
        assertVaultError(.truncated, "the vault \(indexPath) is truncated (\(second.end - 1) bytes; it ends inside entry 2 of 2): restore it from a backup") { try open() }
        try writeFile(bytes)
        XCTAssertEqual(text(try open().secret(named: "api/key")), "k")
    }

    func testANewerFormatIsNamedWithTheVersionThisBuildReads() throws {
        _ = try makeVault()
        var bytes = try fileBytes()
        bytes[8] = 3
        try writeFile(bytes)
        assertVaultError(.newerFormat, "the vault \(indexPath) was written by a newer hubscript: format 3, this build reads up to 2") { try open() }
        bytes[8] = 0
        try writeFile(bytes)
        assertVaultError(.corrupt, "the vault \(indexPath) has an unknown format version 0") { try open() }
    }

    func testAFileThatIsNotAVaultHasBadMagic() throws {
        _ = try makeVault()
        try writeFile(Array("HUBVAULX and more".utf8))
        assertVaultError(.badMagic, "\(indexPath) is not a hubscript vault (bad magic)") { try open() }
        try writeFile(Array("HUB".utf8))
        assertVaultError(.truncated, "the vault \(indexPath) is truncated (3 bytes; it ends inside its header): restore it from a backup") { try open() }
    }

    func testBytesAfterTheLastEntryAndDamagedHeadersAreRefused() throws {
        _ = try makeVault([("a", "1")])
        let bytes = try fileBytes()
        try writeFile(bytes + [0])
        assertVaultError(.corrupt, "the vault \(indexPath) has 1 unexpected bytes after its index seal") { try open() }
        var damaged = bytes
        damaged[10] = 7
        try writeFile(damaged)
        assertVaultError(.corrupt, "the vault \(indexPath) has an unknown key kind 7 (or a damaged header)") { try open() }
        damaged = bytes
        damaged[10] = 2
        damaged[36] = 0xFF
        damaged[41] = 0x7F
        try writeFile(damaged)
        assertVaultError(.corrupt, "the vault \(indexPath) asks for Argon2id costs this build refuses (0 passes, 139637976727807 bytes): is its header damaged?") { try open() }
        damaged = bytes
        damaged[60] = 1 + 1   // entry count 2, but one entry: the key check fails first
        try writeFile(damaged)
        assertVaultError(.wrongKey, "wrong key: the vault \(indexPath) does not open with the key (nothing was read or changed)") { try open() }
    }

    func testAMissingOrUnreadableVaultIsNamed() throws {
        assertVaultError(.noVault, "no vault at \(vaultFolder.path) (create one with 'hubscript vault init')") { try open() }
        try FileManager.default.createDirectory(atPath: indexPath, withIntermediateDirectories: true)
        assertVaultError(.unreadable, "the vault \(indexPath) is a folder, not a regular file: is --vault-dir the vault's folder?") { try open() }
        try FileManager.default.removeItem(atPath: indexPath)
        XCTAssertEqual(mkfifo(indexPath, 0o600), 0)
        assertVaultError(.unreadable, "the vault \(indexPath) is a FIFO (named pipe), not a regular file: is --vault-dir the vault's folder?") { try open() }
        unlink(indexPath)
        _ = try makeVault()
        assertVaultError(.alreadyExists, "a vault already exists at \(indexPath)") { try makeVault() }
    }

    func testAVaultFileWithoutReadPermissionIsNamed() throws {
        _ = try makeVault()
        chmod(indexPath, 0)
        defer { chmod(indexPath, 0o600) }
        try asUnprivilegedFileUser {
            assertVaultError(.unreadable, "cannot read the vault \(indexPath): permission denied") { try open() }
        }
    }

    /// Runs `body` on this thread with the permission checks of an ordinary user, even
    /// when the tests run as root (as CI does): root reads any file whatever its mode,
    /// but a file-system user id other than 0 drops the capabilities that let it.
    private func asUnprivilegedFileUser(_ body: () throws -> Void) throws {
        guard geteuid() == 0 else { return try body() }
        typealias SetFileSystemUser = @convention(c) (uid_t) -> Int32
        guard let symbol = dlsym(UnsafeMutableRawPointer(bitPattern: 0), "setfsuid") else {
            throw XCTSkip("setfsuid is not available")
        }
        let setfsuid = unsafeBitCast(symbol, to: SetFileSystemUser.self)
        let nobody: uid_t = 65534
        _ = setfsuid(nobody)
        defer { _ = setfsuid(0) }
        guard setfsuid(nobody) == Int32(nobody) else { throw XCTSkip("this thread's file-system user id cannot be changed") }
        try body()
    }

    func testKeyFilesMustBePrivateRegularAndAKey() throws {
        let path = root.appendingPathComponent("key").path
        try Data((0..<32).map { UInt8($0) }).write(to: URL(fileURLWithPath: path))
        chmod(path, 0o640)
        assertVaultError(.badKey, "the key file \(path) can be read or written by others (mode 640): run chmod 600 \(path)") {
            try VaultKeyMaterial.readKeyFile(path)
        }
        chmod(path, 0o600)
        XCTAssertEqual(try VaultKeyMaterial.readKeyFile(path).withUnsafeBytes { Array($0) }, (0..<32).map { UInt8($0) })
        try Data((String(repeating: "0f", count: 32) + "\n").utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try VaultKeyMaterial.readKeyFile(path).withUnsafeBytes { Array($0) }, [UInt8](repeating: 15, count: 32))
        try Data((Data(repeating: 0xAB, count: 32).base64EncodedString() + "\r\n").utf8).write(to: URL(fileURLWithPath: path))
        XCTAssertEqual(try VaultKeyMaterial.readKeyFile(path).withUnsafeBytes { Array($0) }, [UInt8](repeating: 0xAB, count: 32))
        for bad in ["short", String(repeating: "zz", count: 32), String(repeating: "0", count: 63), String(repeating: "a", count: 200)] {
            try Data(bad.utf8).write(to: URL(fileURLWithPath: path))
            assertVaultError(.badKey, "the key file \(path) does not hold a vault key: expected 32 raw bytes, 64 hex digits or 44 characters of base64") {
                try VaultKeyMaterial.readKeyFile(path)
            }
        }
        assertVaultError(.badKey, "the key file \(root.path) is a folder, not a regular file: give a file holding the key (mode 0600)") {
            try VaultKeyMaterial.readKeyFile(root.path)
        }
        // A FIFO (with nobody writing to it) or a device is refused at once, not waited on.
        let fifo = root.appendingPathComponent("key.fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        assertVaultError(.badKey, "the key file \(fifo) is a FIFO (named pipe), not a regular file: give a file holding the key (mode 0600)") {
            try VaultKeyMaterial.readKeyFile(fifo)
        }
        assertVaultError(.badKey, "the key file /dev/null is a character device, not a regular file: give a file holding the key (mode 0600)") {
            try VaultKeyMaterial.readKeyFile("/dev/null")
        }
        assertVaultError(.badKey, "cannot read the key file \(path)-missing: no such file or directory") {
            try VaultKeyMaterial.readKeyFile(path + "-missing")
        }
    }

    func testTheEnvironmentKeyIsHexOrBase64() throws {
        setenv("HUBSCRIPT_VAULT_TEST_KEY", String(repeating: "7f", count: 32), 1)
        XCTAssertEqual(try VaultKeyMaterial.environmentKey("HUBSCRIPT_VAULT_TEST_KEY")?.withUnsafeBytes { Array($0) },
                       [UInt8](repeating: 0x7F, count: 32))
        setenv("HUBSCRIPT_VAULT_TEST_KEY", "not a key", 1)
        assertVaultError(.badKey, "$HUBSCRIPT_VAULT_TEST_KEY does not hold a vault key: expected 32 raw bytes, 64 hex digits or 44 characters of base64") {
            try VaultKeyMaterial.environmentKey("HUBSCRIPT_VAULT_TEST_KEY")
        }
        unsetenv("HUBSCRIPT_VAULT_TEST_KEY")
        XCTAssertNil(try VaultKeyMaterial.environmentKey("HUBSCRIPT_VAULT_TEST_KEY"))
    }

    func testNamesAndValuesOutsideTheRulesAreRefused() throws {
        let vault = try makeVault()
        for bad in ["", "/lead", "a b", "é", "x\u{1B}[2J", String(repeating: "a", count: 256)] {
            assertVaultError(.invalidName, "invalid name '\(bad)': use 1–255 letters, digits and . _ - / @ : + = starting with a letter or digit") {
                try vault.setSecret(bad, value: try SecretBytes(copying: [1]))
            }
        }
        assertVaultError(.invalidName, "invalid name 'obj_x': names starting with obj_ are object ids") {
            try vault.setSecret("obj_x", value: try SecretBytes(copying: [1]))
        }
        assertVaultError(.invalidValue, "the value of 'a' is empty: nothing to store") { try vault.setSecret("a", value: try SecretBytes(count: 0)) }
        assertVaultError(.invalidValue, "the value of 'a' is over 1 MiB: store it as an object (hubscript vault put-object)") {
            try vault.setSecret("a", value: try SecretBytes(count: VaultLimits.maxSecretBytes + 1))
        }
        XCTAssertEqual(try vault.setSecret("a", value: try SecretBytes(count: VaultLimits.maxSecretBytes)), .created)
        assertVaultError(.notFound, "no secret 'nope' in the vault \(vaultFolder.path)") { try vault.secret(named: "nope") }
        assertVaultError(.notFound, "no entry 'nope' in the vault \(vaultFolder.path)") { try vault.remove("nope") }
    }

    func testAHeldLockMakesAWriteWaitThenGiveUp() throws {
        let vault = try makeVault()
        let fd = Glibc.open(vaultFolder.appendingPathComponent(Vault.lockFileName).path, O_RDWR)
        defer { close(fd) }
        XCTAssertEqual(flock(fd, LOCK_EX), 0)
        let before = try fileBytes()
        assertVaultError(.locked, "the vault \(vaultFolder.path) is busy: another hubscript process holds its lock (waited 0 s)") {
            try vault.setSecret("a", value: try SecretBytes(copying: [1]))
        }
        XCTAssertEqual(try fileBytes(), before)
        flock(fd, LOCK_UN)
        XCTAssertEqual(try vault.setSecret("a", value: try SecretBytes(copying: [1])), .created)
    }
}
