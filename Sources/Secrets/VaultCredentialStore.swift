import SystemText
import Foundation
import HubClient
import ScriptHost
import Vault

/// Keeps each profile's `hubscript login` session in the vault, as the secret
/// `sessions/<profile>` (the `StoredSession` as JSON, sealed like every entry). Saves are
/// the vault's atomic writes; a refresh token loaded is registered with
/// `SecretRedactor.shared`. Thread-safe (the resolver serialises use of the vault).
public final class VaultCredentialStore: CredentialStore, @unchecked Sendable {
    public let resolver: VaultSecretResolver

    public init(resolver: VaultSecretResolver) {
        self.resolver = resolver
    }

    /// Where sessions are kept: no binding may store anything else under it.
    public static let entryPrefix = "sessions/"

    /// `sessions/<profile>`, with characters a vault name cannot hold replaced by `_`.
    public static func entryName(profile: String) -> String {
        let allowed = Set("._-@:+=")
        let safe = profile.map { ($0.isASCII && ($0.isLetter || $0.isNumber)) || allowed.contains($0) ? String($0) : "_" }.joined()
        return entryPrefix + (safe.isEmpty ? "_" : safe)
    }

    public func load(profile: String) throws -> StoredSession? {
        let name = Self.entryName(profile: profile)
        let bytes: SecretBytes? = try resolver.withVault { vault in
            do { return try vault.secret(named: name) } catch let e as VaultError where e.code == .notFound { return nil }
        }
        guard let bytes else { return nil }
        let session = try bytes.withUnsafeBytes { try StoredSession(storedJSON: Data($0), source: "in the vault entry '\(name)'") }
        let token = Array(session.refreshToken.utf8)
        token.withUnsafeBytes { SecretRedactor.shared.register($0, name: name) }
        return session
    }

    public func save(_ session: StoredSession, profile: String) throws {
        var data = session.storedJSON
        defer { data.resetBytes(in: 0..<data.count) }
        let value = try SecretBytes(copying: data)
        try resolver.withVault { _ = try $0.setSecret(Self.entryName(profile: profile), value: value) }
    }

    public func wipe(profile: String) throws {
        try resolver.withVault { vault in
            do { _ = try vault.remove(Self.entryName(profile: profile)) } catch let e as VaultError where e.code == .notFound {}
        }
    }
}

/// Where `hubscript login` sessions are kept: in the vault once one is initialised
/// (and its key given, as for runs), else in files under the state directory.
public enum SessionStorage {
    /// The store to use, and a line to tell the user (or nil).
    public struct Choice {
        public let store: any CredentialStore
        /// `moved the stored session …` after a migration; with the file store, a hint
        /// to initialise a vault.
        public let notice: String?
        public let inVault: Bool
    }

    /// The store for `profile`. With a vault in `resolver.folder`, a session still in
    /// `files` is moved into the vault and its file overwritten and deleted. Throws
    /// a `HubError` (`vault_locked`, `vault_error`) when a vault exists and cannot be opened:
    /// the file store is a fallback only when there is no vault.
    public static func choose(profile: String, resolver: VaultSecretResolver, files: FileCredentialStore) throws -> Choice {
        guard resolver.exists else {
            return Choice(store: files, notice: "hubscript: hint: the session is kept in \(files.directory.path) (mode 0600); run `hubscript vault init` to keep sessions encrypted in the vault instead", inVault: false)
        }
        let store = VaultCredentialStore(resolver: resolver)
        do {
            guard let old = try files.load(profile: profile) else {
                _ = try resolver.withVault { _ in }
                return Choice(store: store, notice: nil, inVault: true)
            }
            if try store.load(profile: profile) == nil { try store.save(old, profile: profile) }
            let file = files.fileURL(profile: profile).path
            overwrite(file)
            try files.wipe(profile: profile)
            return Choice(store: store, notice: "hubscript: moved the stored session of '\(profile)' from \(file) into the vault (\(VaultCredentialStore.entryName(profile: profile))) and deleted the file",
                          inVault: true)
        } catch let e as ScriptStructuredError {
            throw HubError(code: e.code, message: "Profile \(profile) keeps its session in the vault: \(e.message)",
                           hint: "hubscript login and runs of session profiles need the vault's key once a vault exists.")
        }
    }

    /// Overwrites the file at `path` with zeros and syncs it (before it is deleted).
    static func overwrite(_ path: String) {
        let fd = open(path, O_WRONLY | O_NOFOLLOW)
        guard fd >= 0 else { return }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { return }
        let zeros = [UInt8](repeating: 0, count: Int(info.st_size))
        _ = zeros.withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
        _ = fsync(fd)
    }
}
