import Foundation
import SystemText

/// Where the key that opens a vault comes from.
public enum VaultKeySource: Sendable {
    /// A key file: 32 raw bytes, or the key as 64 hex digits or 44 characters of
    /// standard base64, optionally followed by one newline. Refused if its group or
    /// others may read or write it, or if it is not a regular file.
    case keyFile(String)
    /// A 32-byte key already in locked memory (`VaultKeyMaterial.environmentKey`).
    case key(SecretBytes)
    /// A passphrase (its UTF-8 bytes), stretched with Argon2id.
    case passphrase(SecretBytes)

    /// How a message names this source.
    var label: String {
        switch self {
        case .keyFile(let path): return "the key file \(path)"
        case .key: return "the key"
        case .passphrase: return "the passphrase"
        }
    }
}

/// Reading, decoding and making keys. Key bytes only ever exist in `SecretBytes`.
public enum VaultKeyMaterial {
    /// The largest key file read (a raw, hex or base64 key and a newline fit easily).
    static let maxKeyFileBytes = 128

    /// Reads the 32-byte key of the key file at `path` (formats: `VaultKeySource.keyFile`).
    /// Opened without blocking (a FIFO or a device named as the key file is refused at
    /// once instead of waiting for a writer) and refused unless it is a regular file.
    public static func readKeyFile(_ path: String) throws -> SecretBytes {
        let fd = try FileIO.open(path, O_RDONLY | O_NONBLOCK | O_NOCTTY).orThrow(.badKey) { "cannot read the key file \(path): \($0)" }
        defer { close(fd) }
        var info = stat()
        guard fstat(fd, &info) == 0 else { throw VaultError(.badKey, "cannot read the key file \(path): \(FileIO.reason(errno))") }
        guard info.st_mode & S_IFMT == S_IFREG else {
            throw VaultError(.badKey, "the key file \(path) is \(FileIO.kind(info.st_mode)), not a regular file: give a file holding the key (mode 0600)")
        }
        let mode = info.st_mode & 0o777
        guard mode & 0o077 == 0 else {
            throw VaultError(.badKey, "the key file \(path) can be read or written by others (mode \(String(mode, radix: 8))): run chmod 600 \(path)")
        }
        let text = try SecretBytes(count: 0, capacity: maxKeyFileBytes + 1)
        try text.fill { buffer in
            try FileIO.readFull(fd, into: buffer).orThrow(.badKey) { "cannot read the key file \(path): \($0)" }
        }
        guard text.count <= maxKeyFileBytes else { throw badKeyText("the key file \(path)") }
        return try decode(text, what: "the key file \(path)")
    }

    /// The key in the environment variable `name` (hex or base64, as in a key file),
    /// read with `getenv` so it never becomes a Swift string; nil if unset or empty.
    public static func environmentKey(_ name: String) throws -> SecretBytes? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        let length = strlen(value)
        guard length <= maxKeyFileBytes else { throw badKeyText("$\(name)") }
        let text = try SecretBytes(count: length)
        text.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: value, count: length)) }
        return try decode(text, what: "$\(name)")
    }

    /// The passphrase in the environment variable `name`; nil if unset or empty.
    public static func environmentPassphrase(_ name: String) throws -> SecretBytes? {
        guard let value = getenv(name), value.pointee != 0 else { return nil }
        let length = strlen(value)
        let text = try SecretBytes(count: length)
        text.withUnsafeMutableBytes { $0.copyMemory(from: UnsafeRawBufferPointer(start: value, count: length)) }
        return text
    }

    /// A new random key, written to `path` as 64 hex digits and a newline (created
    /// exclusively, mode 0600, synced with its folder). Fails if `path` exists.
    @discardableResult
    public static func createKeyFile(_ path: String, random: any VaultRandomSource = SystemVaultRandom()) throws -> SecretBytes {
        let key = try SecretBytes(count: Sodium.keyBytes)
        key.withUnsafeMutableBytes { random.fill($0) }
        let text = try SecretBytes(count: Sodium.keyBytes * 2 + 1)
        key.withUnsafeBytes { k in
            text.withUnsafeMutableBytes { t in
                for (i, b) in k.enumerated() {
                    t[2 * i] = Hex.digit(b >> 4)
                    t[2 * i + 1] = Hex.digit(b)
                }
                t[t.count - 1] = 0x0A
            }
        }
        let fd = try FileIO.open(path, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW).orThrow(.badKey) {
            "cannot create the key file \(path): \($0)"
        }
        defer { close(fd) }
        do {
            try text.withUnsafeBytes { try FileIO.writeAll(fd, $0).orThrow(.ioError) { "cannot write the key file \(path): \($0)" } }
            guard fsync(fd) == 0 else { throw VaultError(.ioError, "cannot sync the key file \(path): \(FileIO.reason(errno))") }
            let folder = URL(fileURLWithPath: path).deletingLastPathComponent().path
            try FileIO.syncFolder(folder).orThrow(.ioError) { "cannot sync the folder \(folder): \($0)" }
        } catch {
            unlink(path)
            throw error
        }
        return key
    }

    /// Decodes a key's text form (raw 32 bytes, hex, base64; one trailing newline
    /// allowed) into a 32-byte key. `text` is zeroed by its own deinit.
    static func decode(_ text: SecretBytes, what: String) throws -> SecretBytes {
        if text.count == Sodium.keyBytes {
            let key = try SecretBytes(count: Sodium.keyBytes)
            text.withUnsafeBytes { t in key.withUnsafeMutableBytes { $0.copyMemory(from: t) } }
            return key
        }
        let newline = text.withUnsafeBytes { $0.last == 0x0A }
        if newline { text.truncate(to: text.count - 1) }
        if text.withUnsafeBytes({ $0.last == 0x0D }) { text.truncate(to: text.count - 1) }
        let key = try SecretBytes(count: Sodium.keyBytes)
        guard text.withUnsafeBytes({ Sodium.decodeKey($0, into: key) }) else { throw badKeyText(what) }
        return key
    }

    static func badKeyText(_ what: String) -> VaultError {
        VaultError(.badKey, "\(what) does not hold a vault key: expected 32 raw bytes, 64 hex digits or 44 characters of base64")
    }
}

/// The source of the vault's random bytes (salts, nonces, ids, keys). Tests inject a
/// fixed one for known-answer tests; everything else uses `SystemVaultRandom`.
public protocol VaultRandomSource: Sendable {
    func fill(_ buffer: UnsafeMutableRawBufferPointer)
}

/// libsodium's `randombytes_buf` (the system CSPRNG).
public struct SystemVaultRandom: VaultRandomSource {
    public init() {}
    public func fill(_ buffer: UnsafeMutableRawBufferPointer) { Sodium.randomBytes(into: buffer) }
}
