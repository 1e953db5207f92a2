import Foundation
import ScriptHost
import Vault
import Secrets

/// Where a run's `vault:NAME` exports go.
public enum VaultExportTarget: Sendable {
    /// Streamed into the vault this resolver opens, each as the object `NAME`.
    case store(VaultSecretResolver)
    /// A plan: rows are encoded and counted, nothing is written to the vault.
    case discard
}

/// The sink of one `vault:NAME` export: a `VaultObjectWriter` (constant memory; the
/// object exists only once `finish` returns), or nothing for a plan.
final class VaultObjectSink: ExportSink {
    private let resolver: VaultSecretResolver?
    private var writer: VaultObjectWriter?

    private init(resolver: VaultSecretResolver?, writer: VaultObjectWriter?) {
        self.resolver = resolver
        self.writer = writer
    }

    /// A sink for the export `name` (`vault:NAME`) to `target`. Throws `ExportIOError`
    /// when the run has no vault or it cannot be opened, saying what to do.
    static func open(_ target: VaultExportTarget?, name: String, function: String) throws -> VaultObjectSink {
        let object = String(name.dropFirst(ExportName.vaultPrefix.count))
        switch target {
        case nil:
            throw ExportIOError("cannot export \(name): this run has no vault")
        case .discard?:
            return VaultObjectSink(resolver: nil, writer: nil)
        case .store(let resolver)?:
            do {
                let writer = try resolver.withVault { try $0.makeObjectWriter(name: object) }
                return VaultObjectSink(resolver: resolver, writer: writer)
            } catch let e as ScriptStructuredError {
                throw ExportIOError("cannot export \(name): \(e.message)")
            } catch let e as VaultError {
                throw ExportIOError("cannot export \(name): \(e.message)")
            }
        }
    }

    func write(_ data: UnsafeRawBufferPointer, path: String) throws {
        do { try writer?.write(data) } catch let e as VaultError {
            throw ExportIOError("cannot write \(path): \(e.message)")
        }
    }

    func sync(path: String) throws {}

    func close() {}

    /// Finishes the object; returns its id (nil for a plan's).
    func finish() throws -> String? {
        guard let writer, let resolver else { return nil }
        self.writer = nil
        do {
            return try resolver.withVault { _ in try writer.finish() }.id
        } catch let e as VaultError {
            writer.abort()
            throw ExportIOError("cannot store \(ExportName.vaultPrefix)\(writer.name ?? ""): \(e.message)")
        }
    }

    /// Drops the object (its temporary file is removed; the vault does not list it).
    func abort() {
        writer?.abort()
        writer = nil
    }
}
