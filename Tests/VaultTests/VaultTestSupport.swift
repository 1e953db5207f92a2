import Foundation
import XCTest
@testable import Vault

/// Deterministic "random" bytes for known-answer tests: 0x01, 0x02, … across calls.
final class CountingRandom: VaultRandomSource, @unchecked Sendable {
    private let lock = NSLock()
    private var next: UInt8 = 1

    func fill(_ buffer: UnsafeMutableRawBufferPointer) {
        lock.withLock {
            for k in buffer.indices {
                buffer[k] = next
                next &+= 1
            }
        }
    }
}

/// A temporary folder per test, a fixed key and clock, and helpers to read, damage
/// and check vault files.
class VaultTestCase: XCTestCase {
    private(set) var root: URL!
    /// 2026-01-01T00:00:00Z.
    static let now: TimeInterval = 1_767_225_600

    var vaultFolder: URL { root.appendingPathComponent("vault", isDirectory: true) }
    var indexPath: String { vaultFolder.appendingPathComponent(Vault.indexFileName).path }

    override func setUpWithError() throws {
        try super.setUpWithError()
        root = FileManager.default.temporaryDirectory.appendingPathComponent("vault-tests-\(UUID().uuidString)", isDirectory: true)
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDown() {
        if let root { try? FileManager.default.removeItem(at: root) }
        super.tearDown()
    }

    /// Bytes 0, 1, …, 31 (or starting at `first`).
    func key(_ first: UInt8 = 0) throws -> SecretBytes { try SecretBytes(copying: (0..<32).map { first &+ $0 }) }

    func options(random: any VaultRandomSource = SystemVaultRandom(), chunk: Int = 1024,
                 checkpoint: @escaping @Sendable (String) -> Void = { _ in }) -> VaultOptions {
        VaultOptions(random: random, clock: { Date(timeIntervalSince1970: Self.now) }, checkpoint: checkpoint,
                     lockTimeout: 0.2, objectChunkSize: chunk)
    }

    /// A new raw-key vault with `secrets` set in order.
    func makeVault(_ secrets: [(String, String)] = [], key first: UInt8 = 0, random: any VaultRandomSource = SystemVaultRandom()) throws -> Vault {
        let vault = try Vault.create(at: vaultFolder, key: .key(try key(first)), options: options(random: random))
        for (name, value) in secrets { try vault.setSecret(name, value: try SecretBytes(copying: Array(value.utf8))) }
        return vault
    }

    func open(key first: UInt8 = 0) throws -> Vault {
        try Vault.open(at: vaultFolder, key: .key(try key(first)), options: options())
    }

    func text(_ secret: SecretBytes) -> String { secret.withUnsafeBytes { String(decoding: $0, as: UTF8.self) } }

    func fileBytes(_ path: String? = nil) throws -> [UInt8] { Array(try Data(contentsOf: URL(fileURLWithPath: path ?? indexPath))) }

    func writeFile(_ bytes: [UInt8], _ path: String? = nil) throws { try Data(bytes).write(to: URL(fileURLWithPath: path ?? indexPath)) }

    /// Fails unless `body` throws a `VaultError` with `code` and exactly `message`.
    func assertVaultError<T>(_ code: VaultError.Code, _ message: String, file: StaticString = #filePath, line: UInt = #line,
                             _ body: () throws -> T) {
        do {
            _ = try body()
            XCTFail("expected \(code): \(message)", file: file, line: line)
        } catch let error as VaultError {
            XCTAssertEqual(error.code, code, error.message, file: file, line: line)
            XCTAssertEqual(error.message, message, file: file, line: line)
        } catch {
            XCTFail("unexpected \(error)", file: file, line: line)
        }
    }

    /// The offset of entry `name`'s record in the file of `vault` (header, then records).
    func recordOffset(_ name: String, in bytes: [UInt8]) -> (start: Int, nonce: Int, sealed: Int, end: Int)? {
        guard bytes.count >= 104 else { return nil }
        var offset = bytes[8] >= 2 ? 112 : 104
        let count = (0..<4).reduce(0) { $0 | Int(bytes[60 + $1]) << (8 * $1) }
        for _ in 0..<count where offset + 4 <= bytes.count {
            let nameLength = Int(bytes[offset + 2]) | Int(bytes[offset + 3]) << 8
            let nameBytes = Array(bytes[(offset + 4)..<(offset + 4 + nameLength)])
            let nonce = offset + 4 + nameLength + 16
            let lengthAt = nonce + 24
            let sealedLength = (0..<4).reduce(0) { $0 | Int(bytes[lengthAt + $1]) << (8 * $1) }
            let end = lengthAt + 4 + sealedLength
            if nameBytes == Array(name.utf8) { return (offset, nonce, lengthAt + 4, end) }
            offset = end
        }
        return nil
    }
}
