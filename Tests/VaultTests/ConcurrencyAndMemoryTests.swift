import Foundation
import XCTest
@testable import Vault

/// Writers in parallel do not lose each other's changes (each re-reads under the
/// lock); locked buffers show nothing of their content.
final class ConcurrencyAndMemoryTests: VaultTestCase {
    func testParallelWritersThroughSeparateHandlesKeepEveryChange() throws {
        _ = try makeVault()
        let folder = vaultFolder
        let failures = LockedList()
        var waiting = self.options()
        waiting.lockTimeout = 30
        let options = waiting
        DispatchQueue.concurrentPerform(iterations: 4) { t in
            do {
                let vault = try Vault.open(at: folder, key: .key(try SecretBytes(copying: (0..<32).map { UInt8($0) })), options: options)
                for k in 0..<15 { try vault.setSecret("t\(t)/k\(k)", value: try SecretBytes(copying: Array("\(t)-\(k)".utf8))) }
            } catch { failures.add("\(error)") }
        }
        XCTAssertEqual(failures.items, [])
        let vault = try open()
        XCTAssertEqual(try vault.list().count, 60)
        XCTAssertEqual(text(try vault.secret(named: "t3/k14")), "3-14")
    }

    func testSecretBytesHaveNoStringFormAndZeroWhatTheyDrop() throws {
        let secret = try SecretBytes(copying: Array("hunter2\n".utf8))
        XCTAssertEqual("\(secret)", "<secret, 8 bytes>")
        XCTAssertEqual(String(reflecting: secret), "<secret, 8 bytes>")
        XCTAssertFalse(String(describing: Mirror(reflecting: secret).children.map { $0 }).contains("hunter"))
        secret.truncate(to: 7)
        XCTAssertEqual(secret.count, 7)
        XCTAssertEqual(secret.pointer.load(fromByteOffset: 7, as: UInt8.self), 0, "the dropped newline is zeroed")
        XCTAssertTrue(secret.constantTimeEquals(try SecretBytes(copying: Array("hunter2".utf8))))
        XCTAssertFalse(secret.constantTimeEquals(try SecretBytes(copying: Array("hunter3".utf8))))
    }
}

final class LockedList: @unchecked Sendable {
    private let lock = NSLock()
    private var list: [String] = []
    func add(_ s: String) { lock.withLock { list.append(s) } }
    var items: [String] { lock.withLock { list } }
}
