import Foundation
import SHA256Kit

/// Streams one object into the vault in constant memory: plaintext is gathered into
/// one chunk of locked memory, sealed with `crypto_secretstream_xchacha20poly1305`
/// under the object's own random key, and appended to a temporary file in
/// `objects/`, hashing the ciphertext as it goes.
///
/// Contract:
/// - `write` any number of times, then `finish()` (which names the file by its
///   SHA-256, syncs it, and records the object's key under `name` — replacing an
///   object of that name — in one atomic write of the vault) or `abort()`.
/// - Until `finish` returns, the vault does not list the object; after `abort`, a
///   failed `finish`, or a crash, nothing of it stays but, at worst, a temporary
///   ciphertext file the next write of the vault removes.
/// - The vault's lock is taken only inside `finish`, so a long export does not stop
///   other processes from changing the vault meanwhile.
/// - Deinit without `finish` aborts.
public final class VaultObjectWriter {
    static let tempPrefix = ".object.tmp-"

    private let vault: Vault
    /// The name it will be stored under; nil to store it under its id.
    public let name: String?
    private var file: AtomicFile?
    private let stream: SecretStream
    private let fileKey: SecretBytes
    private let header: ObjectFileHeader
    private let associatedData: [UInt8]
    private var hasher = SHA256()
    private let plain: SecretBytes
    private var filled = 0
    private let cipher: UnsafeMutableRawBufferPointer
    private var size: UInt64 = 0
    private var chunks = 0

    init(vault: Vault, name: String?) throws {
        if let name {
            try VaultName.validate(name)
            if vault.index.records.contains(where: { $0.name == name && $0.kind == .secret }) {
                throw VaultError(.invalidName, "'\(name)' is a secret in the vault: choose another name for the object", entry: name)
            }
        }
        let chunkSize = vault.options.objectChunkSize
        guard ObjectFileHeader.chunkSizes.contains(chunkSize) else {
            throw VaultError(.internalError, "object chunk size \(chunkSize) is outside 1 KiB – 16 MiB")
        }
        self.vault = vault
        self.name = name
        fileKey = try SecretBytes(count: Sodium.keyBytes)
        fileKey.withUnsafeMutableBytes { vault.options.random.fill($0) }
        var streamHeader: [UInt8] = []
        stream = try SecretStream.push(key: fileKey, header: &streamHeader)
        header = ObjectFileHeader(chunkSize: chunkSize, streamHeader: streamHeader)
        associatedData = header.fixedBytes
        plain = try SecretBytes(count: chunkSize)
        cipher = .allocate(byteCount: chunkSize + Sodium.streamOverhead, alignment: 16)
        try Vault.makeFolder(vault.objectsPath)
        let file = try AtomicFile(folder: vault.objectsPath, baseName: "object",
                                  anonymous: false, label: "object", checkpoint: vault.options.checkpoint)
        file.lockExclusive()
        self.file = file
        let encoded = header.encoded
        encoded.withUnsafeBytes { hasher.update($0) }
        try file.write(encoded)
    }

    deinit {
        abort()
        cipher.deallocate()
    }

    /// Appends `bytes` to the object.
    public func write(_ bytes: UnsafeRawBufferPointer) throws {
        var offset = 0
        while offset < bytes.count {
            let n = min(bytes.count - offset, header.chunkSize - filled)
            (plain.pointer + filled).copyMemory(from: bytes.baseAddress! + offset, byteCount: n)
            filled += n
            offset += n
            if filled == header.chunkSize { try seal(.message) }
        }
    }

    public func write(_ bytes: [UInt8]) throws { try bytes.withUnsafeBytes { try write($0) } }

    /// Appends everything `fd` reads until its end, reading straight into the chunk.
    public func write(contentsOf fd: Int32, what: String) throws {
        while true {
            let buffer = UnsafeMutableRawBufferPointer(start: plain.pointer + filled, count: header.chunkSize - filled)
            let n = try FileIO.readFull(fd, into: buffer).orThrow(.ioError) { "cannot read \(what): \($0)" }
            filled += n
            if filled < header.chunkSize { return }
            try seal(.message)
        }
    }

    /// Seals the last chunk, names the file by its SHA-256 and records the object in
    /// the vault. Errors leave the vault as it was.
    @discardableResult
    public func finish() throws -> VaultObjectInfo {
        guard let file else { throw VaultError(.internalError, "this object writer has already finished or aborted") }
        try seal(.final)
        let digest = hasher.finish()
        let record = try ObjectKeyRecord.make(digest: digest, fileKey: fileKey, size: size)
        let target = vault.objectsPath + "/" + record.id
        try file.commit(as: target)
        self.file = nil
        do {
            try vault.addObject(record, name: name ?? record.id)
        } catch {
            unlink(target)
            throw error
        }
        return record.info(name: name ?? record.id)
    }

    /// Drops the object: its temporary file is removed. Idempotent.
    public func abort() {
        file?.discard()
        file = nil
        filled = 0
    }

    private func seal(_ tag: SecretStream.Tag) throws {
        guard let file else { throw VaultError(.internalError, "this object writer has already finished or aborted") }
        let n = stream.push(UnsafeRawBufferPointer(start: plain.pointer, count: filled), ad: associatedData, tag: tag, into: cipher)
        let sealed = UnsafeRawBufferPointer(rebasing: cipher[0..<n])
        hasher.update(sealed)
        try file.write(sealed)
        size += UInt64(filled)
        filled = 0
        chunks += 1
        if chunks == 1 { vault.options.checkpoint("object.temp-partial") }
    }
}
