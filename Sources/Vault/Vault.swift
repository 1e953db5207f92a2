import Foundation

/// An open (unlocked) vault: named secrets and objects, encrypted at rest
/// (docs/vault-format.md, docs/vault.md).
///
/// Contracts:
/// - `open` reads the vault file and checks the key before anything else: a wrong key
///   is `wrong_key`, and nothing has been decrypted. Entries are authenticated when
///   read, and every write first authenticates every entry it keeps.
/// - Every change (`setSecret`, `remove`, `rotateKey`, an object's `finish`) takes
///   the vault's lock (`vault.lock`, `flock`), re-reads the file (another process may
///   have changed it), and replaces the file atomically: a crash leaves the old vault
///   or the new one. On any error nothing has changed.
/// - Values come back as `SecretBytes` only; `list` never returns values.
/// - Not thread-safe: use one `Vault` from one thread at a time.
public final class Vault {
    public static let indexFileName = "vault.hsv"
    public static let lockFileName = "vault.lock"
    public static let objectsFolderName = "objects"

    /// The vault's folder.
    public let folder: URL
    let options: VaultOptions
    var index: VaultIndex
    var key: SecretBytes
    let source: String

    var indexPath: String { folder.appendingPathComponent(Self.indexFileName).path }
    var objectsPath: String { folder.appendingPathComponent(Self.objectsFolderName).path }
    var lockPath: String { folder.appendingPathComponent(Self.lockFileName).path }

    /// The vault's id (hex), fixed when it was made.
    public var id: String { Sodium.hex(index.header.vaultID) }
    /// The format version of its file.
    public var formatVersion: Int { Int(index.header.version) }
    /// Whether it opens with a passphrase (else with a key).
    public var usesPassphrase: Bool { index.header.keyKind == .passphrase }
    /// Argon2id costs of a passphrase vault.
    public var kdf: VaultKDF? { index.header.kdf }

    /// What this vault lets differ from the index its key last sealed.
    let policy: VaultRollbackPolicy
    /// The generation this machine remembers of this vault (nil: none, or no memory).
    var rememberedGeneration: UInt64?

    private init(folder: URL, options: VaultOptions, index: VaultIndex, key: SecretBytes, source: String,
                 policy: VaultRollbackPolicy = .refuse) {
        self.folder = folder
        self.options = options
        self.index = index
        self.key = key
        self.source = source
        self.policy = policy
    }

    /// Opens the vault in `folder` with `key`. Errors: `no_vault`, `unreadable`,
    /// `bad_magic`, `newer_format`, `truncated`, `corrupt`, `bad_key`, `wrong_key`;
    /// then, as `policy` allows, `tampered` (the index seal), `entry_rolled_back`,
    /// `entry_added`, `entry_removed`, `rolled_back`, `generation_memory_damaged`
    /// (docs/vault-format.md, "Rollback"). A vault opened this way is remembered at
    /// its generation on this machine (`VaultOptions.generationMemory`).
    public static func open(at folder: URL, key source: VaultKeySource, options: VaultOptions = VaultOptions(),
                            policy: VaultRollbackPolicy = .refuse) throws -> Vault {
        try Sodium.ensureReady()
        let path = folder.appendingPathComponent(indexFileName).path
        let bytes = try readIndexFile(path, folder: folder.path)
        var reader = ByteReader(bytes)
        let firstHeader = try VaultHeader.parse(&reader, file: path)
        let key = try unlock(source, header: firstHeader, file: path)
        let body = try VaultIndex.parseBody(&reader, header: firstHeader, file: path)
        var index = VaultIndex(header: firstHeader, records: body.records, seal: body.seal)
        let remembered: UInt64?
        do {
            remembered = try checkIntegrity(index, key: key, file: path, options: options, policy: policy)
        } catch let error as VaultError where error.code == .rolledBack {
            // Another process may have written the vault (and remembered its new
            // generation) between this read of the file and the read of the memory. A
            // generation is remembered only once the file holding it is durable, so a
            // file read now holds at least the generation just read from the memory:
            // read it again, and a vault that is still behind was rolled back.
            index = try reread(path, folder: folder.path, key: key, opened: index.header, source: source.label)
            remembered = try checkIntegrity(index, key: key, file: path, options: options, policy: policy)
        }
        let vault = Vault(folder: folder, options: options, index: index, key: key, source: source.label, policy: policy)
        vault.rememberedGeneration = remembered
        vault.rememberGeneration(index.header.generation)
        return vault
    }

    /// Reads the index file at `path` again with `key`, which opened `previous`: a file
    /// whose key is no longer `key` (rotated meanwhile) is `wrong_key`.
    static func reread(_ path: String, folder: String, key: SecretBytes, opened previous: VaultHeader,
                       source: String) throws -> VaultIndex {
        let bytes = try readIndexFile(path, folder: folder)
        var reader = ByteReader(bytes)
        let header = try VaultHeader.parse(&reader, file: path)
        let scratch = try SecretBytes(count: 0)
        guard header.keyKind == previous.keyKind, header.salt == previous.salt,
              Sodium.open(header.checkTag[...], ad: header.keyCheckAssociatedData, nonce: header.checkNonce[...], key: key, into: scratch)
        else {
            throw VaultError(.wrongKey, "wrong key: the vault \(path) no longer opens with \(source) (was its key rotated?); nothing was changed")
        }
        let body = try VaultIndex.parseBody(&reader, header: header, file: path)
        return VaultIndex(header: header, records: body.records, seal: body.seal)
    }

    /// Makes a new, empty vault in `folder` (created 0700 if missing) that opens with
    /// `key`; `kdf` applies to a passphrase. Fails with `already_exists` if there is one.
    public static func create(at folder: URL, key source: VaultKeySource, kdf: VaultKDF = .moderate,
                              options: VaultOptions = VaultOptions()) throws -> Vault {
        try Sodium.ensureReady()
        try makeFolder(folder.path)
        try makeFolder(folder.appendingPathComponent(objectsFolderName).path)
        let made = try newHeader(source, kdf: kdf, vaultID: nil, random: options.random)
        let vault = Vault(folder: folder, options: options, index: VaultIndex(header: made.header, records: []),
                          key: made.key, source: source.label)
        try vault.locked {
            guard access(vault.indexPath, F_OK) != 0 else {
                throw VaultError(.alreadyExists, "a vault already exists at \(vault.indexPath)")
            }
            try vault.write(vault.index)
        }
        return vault
    }

    /// `mkdir` with mode 0700 (parents as needed); an existing folder is fine.
    static func makeFolder(_ path: String, what: String = "the vault folder") throws {
        if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
        if errno == ENOENT {
            try? FileManager.default.createDirectory(atPath: URL(fileURLWithPath: path).deletingLastPathComponent().path,
                                                     withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
            if mkdir(path, 0o700) == 0 || errno == EEXIST { return }
        }
        throw VaultError(.unreadable, "cannot create \(what) \(path): \(FileIO.reason(errno))")
    }

    // MARK: Keys

    /// A header for a vault keyed by `source` (a new salt for a passphrase), with the
    /// key it derives. `vaultID` nil makes a new id.
    static func newHeader(_ source: VaultKeySource, kdf: VaultKDF, vaultID: [UInt8]?,
                          random: any VaultRandomSource) throws -> (header: VaultHeader, key: SecretBytes) {
        var id = vaultID ?? [UInt8](repeating: 0, count: VaultHeader.vaultIDBytes)
        if vaultID == nil { id.withUnsafeMutableBytes { random.fill($0) } }
        var salt = [UInt8](repeating: 0, count: Sodium.saltBytes)
        var header = VaultHeader(keyKind: .raw, vaultID: id, kdf: nil, salt: salt, entryCount: 0,
                                 checkNonce: [UInt8](repeating: 0, count: Sodium.nonceBytes),
                                 checkTag: [UInt8](repeating: 0, count: Sodium.tagBytes))
        switch source {
        case .keyFile(let path):
            return (header, try VaultKeyMaterial.readKeyFile(path))
        case .key(let key):
            guard key.count == Sodium.keyBytes else { throw VaultKeyMaterial.badKeyText("the key") }
            return (header, key)
        case .passphrase(let passphrase):
            guard kdf.isAccepted else { throw VaultError(.badKey, "Argon2id costs out of range: \(kdf)") }
            salt.withUnsafeMutableBytes { random.fill($0) }
            header.keyKind = .passphrase
            header.kdf = kdf
            header.salt = salt
            return (header, try derive(passphrase, header: header))
        }
    }

    static func derive(_ passphrase: SecretBytes, header: VaultHeader) throws -> SecretBytes {
        guard passphrase.count > 0 else { throw VaultError(.badKey, "the passphrase is empty") }
        let key = try SecretBytes(count: Sodium.keyBytes)
        guard let kdf = header.kdf,
              Sodium.deriveKey(into: key, passphrase: passphrase, salt: header.salt, opsLimit: kdf.opsLimit, memLimit: kdf.memLimit)
        else { throw VaultError(.internalError, "Argon2id failed (not enough memory for \(header.kdf?.description ?? "it")?)") }
        return key
    }

    /// The key `source` gives for `header`, checked against its key check.
    static func unlock(_ source: VaultKeySource, header: VaultHeader, file: String) throws -> SecretBytes {
        let key: SecretBytes
        switch (header.keyKind, source) {
        case (.raw, .keyFile(let path)): key = try VaultKeyMaterial.readKeyFile(path)
        case (.raw, .key(let given)):
            guard given.count == Sodium.keyBytes else { throw VaultKeyMaterial.badKeyText("the key") }
            key = given
        case (.passphrase, .passphrase(let passphrase)): key = try derive(passphrase, header: header)
        case (.raw, .passphrase):
            throw VaultError(.badKey, "the vault \(file) opens with a key (a key file or HUBSCRIPT_VAULT_KEY), not a passphrase")
        case (.passphrase, _):
            throw VaultError(.badKey, "the vault \(file) opens with a passphrase (--passphrase or HUBSCRIPT_VAULT_PASSPHRASE), not a key")
        }
        let scratch = try SecretBytes(count: 0)
        guard Sodium.open(header.checkTag[...], ad: header.keyCheckAssociatedData, nonce: header.checkNonce[...], key: key, into: scratch) else {
            throw VaultError(.wrongKey, "wrong key: the vault \(file) does not open with \(source.label) (nothing was read or changed)")
        }
        return key
    }

    // MARK: The file

    static func readIndexFile(_ path: String, folder: String) throws -> [UInt8] {
        let fd: Int32
        switch FileIO.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY) {
        case .success(let opened): fd = opened
        case .failure(let e) where e.code == ENOENT:
            throw VaultError(.noVault, "no vault at \(folder) (create one with 'hubscript vault init')")
        case .failure(let e):
            throw VaultError(.unreadable, "cannot read the vault \(path): \(e.text)")
        }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0, info.st_mode & S_IFMT == S_IFREG else {
            throw VaultError(.unreadable, "the vault \(path) is \(FileIO.kind(info.st_mode)), not a regular file: is --vault-dir the vault's folder?")
        }
        switch FileIO.readToEnd(fd, limit: VaultLimits.maxIndexBytes) {
        case .success(let bytes): return bytes
        case .failure(let e) where e.code == EFBIG:
            throw VaultError(.corrupt, "the vault \(path) is over \(VaultLimits.maxIndexBytes >> 20) MiB: not a vault this build reads")
        case .failure(let e):
            throw VaultError(.unreadable, "cannot read the vault \(path): \(e.text)")
        }
    }

    /// Runs `body` holding the vault's lock, after removing what crashed writers left.
    func locked<R>(_ body: () throws -> R) throws -> R {
        let lock = try FileLock.acquire(lockPath, timeout: options.lockTimeout,
                                        busy: "the vault \(folder.path) is busy: another hubscript process holds its lock (waited \(Int(options.lockTimeout)) s)")
        defer { lock.release() }
        removeLeftovers()
        return try body()
    }

    /// Re-reads the file (under the lock) with the key this vault was opened with.
    func reload() throws {
        let fresh = try Self.reread(indexPath, folder: folder.path, key: key, opened: index.header, source: source)
        rememberedGeneration = try Self.checkIntegrity(fresh, key: key, file: indexPath, options: options, policy: policy)
        index = fresh
    }

    /// Writes `new` atomically in the current format (migrating records sealed in
    /// format 1), at the generation after the highest of the file's and the one this
    /// machine remembers, with a fresh key check and index seal; then remembers that
    /// generation (after the file is durable, so a crash never leaves the memory ahead
    /// of the file). `new.header` says how its records are sealed.
    func write(_ new: VaultIndex) throws {
        var next = new.header.version < VaultHeader.currentVersion ? try migrated(new) : new
        next.header.entryCount = UInt32(next.records.count)
        next.header.generation = max(index.header.generation, rememberedGeneration ?? 0) + 1
        next.header.checkNonce = newNonce()
        next.header.checkTag = [UInt8]().withUnsafeBytes {
            Sodium.seal($0, ad: next.header.keyCheckAssociatedData, nonce: next.header.checkNonce, key: key)
        }
        next.seal = makeSeal(next)
        try AtomicFile.replace(indexPath, with: next.encoded, label: "index", checkpoint: options.checkpoint)
        index = next
        rememberGeneration(next.header.generation)
    }

    /// Temporary files of writers that died: the vault's own (safe to remove under the
    /// lock) and objects' (removed when no writer holds them and they are a minute old).
    private func removeLeftovers() {
        let fm = FileManager.default
        for name in (try? fm.contentsOfDirectory(atPath: folder.path)) ?? [] where name.hasPrefix("." + Self.indexFileName + ".tmp-") {
            unlink(folder.appendingPathComponent(name).path)
        }
        for name in (try? fm.contentsOfDirectory(atPath: objectsPath)) ?? [] where name.hasPrefix(VaultObjectWriter.tempPrefix) {
            let path = objectsPath + "/" + name
            guard case .success(let fd) = FileIO.open(path, O_RDONLY | O_NOFOLLOW) else { continue }
            var info = stat()
            if fstat(fd, &info) == 0 {
                #if os(Linux)
                let modified = info.st_mtim.tv_sec
                #else
                let modified = info.st_mtimespec.tv_sec
                #endif
                if time(nil) - modified > 60, flock(fd, LOCK_EX | LOCK_NB) == 0 { unlink(path) }
            }
            close(fd)
        }
    }

    func newNonce() -> [UInt8] {
        var nonce = [UInt8](repeating: 0, count: Sodium.nonceBytes)
        nonce.withUnsafeMutableBytes { options.random.fill($0) }
        return nonce
    }

    var now: Int64 { Int64(options.clock().timeIntervalSince1970.rounded(.down)) }
}
