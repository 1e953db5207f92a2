import Foundation
import HubClient
import ScriptHost
import Vault
import XCTest
import Secrets

/// A test case with a vault folder of its own (raw key, small object chunks).
class VaultTestCase: XCTestCase {
    var root: URL!
    var folder: URL { root.appendingPathComponent("vault", isDirectory: true) }
    let key = [UInt8](repeating: 7, count: 32)
    /// Fast Argon2 is irrelevant (raw keys); small chunks so exports span several.
    var options: VaultOptions { var o = VaultOptions(); o.objectChunkSize = 1024; return o }

    override func setUpWithError() throws {
        root = FileManager.default.temporaryDirectory.appendingPathComponent("hubscript-vaultint-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: root, withIntermediateDirectories: true)
    }

    override func tearDown() { try? FileManager.default.removeItem(at: root) }

    func keySource() throws -> VaultKeySource { .key(try SecretBytes(copying: key)) }

    @discardableResult
    func createVault(secrets: [String: String] = [:]) throws -> Vault {
        let vault = try Vault.create(at: folder, key: try keySource(), options: options)
        for (name, value) in secrets { try vault.setSecret(name, value: try SecretBytes(copying: Array(value.utf8))) }
        return vault
    }

    func resolver(locked: Bool = false) -> VaultSecretResolver {
        let key = self.key
        return VaultSecretResolver(folder: folder, options: options) { locked ? nil : .key(try SecretBytes(copying: key)) }
    }
}
