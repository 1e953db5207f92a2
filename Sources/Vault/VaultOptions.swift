import Foundation

/// What a vault can be given besides its folder and key: injectable randomness, clock
/// and checkpoints (the test seams), and limits.
public struct VaultOptions: Sendable {
    /// Salts, nonces, ids and object keys come from here.
    public var random: any VaultRandomSource
    /// Dates stored in entries.
    public var clock: @Sendable () -> Date
    /// Called at named points of every write, e.g. `index.temp-written`,
    /// `index.renamed`, `object.temp-synced`, `output.temp-partial` (the list:
    /// docs/vault-format.md). Crash tests stop the process there; otherwise it does
    /// nothing.
    public var checkpoint: @Sendable (String) -> Void
    /// How long a write waits for another process's lock on the vault.
    public var lockTimeout: Double
    /// Plaintext bytes per chunk of a new object file (1 KiB – 16 MiB).
    public var objectChunkSize: Int
    /// Where this machine remembers the highest generation it saw of each vault, so
    /// that a vault replaced by an older copy of itself as a whole is refused
    /// (`rolled_back`). Nil: nothing is remembered and only the index seal is checked
    /// (an entry replaced by an older copy is still refused).
    public var generationMemory: VaultGenerationMemory?

    public init(random: any VaultRandomSource = SystemVaultRandom(), clock: @escaping @Sendable () -> Date = { Date() },
                checkpoint: @escaping @Sendable (String) -> Void = { _ in }, lockTimeout: Double = 30,
                objectChunkSize: Int = 64 * 1024, generationMemory: VaultGenerationMemory? = nil) {
        self.random = random
        self.clock = clock
        self.checkpoint = checkpoint
        self.lockTimeout = lockTimeout
        self.objectChunkSize = objectChunkSize
        self.generationMemory = generationMemory
    }
}

/// How an open treats a vault that is not the one its key last sealed: an entry that
/// is an older copy of itself, put in or taken out outside hubscript, or a whole file
/// older than this machine has seen.
public enum VaultRollbackPolicy: Sendable, Equatable {
    /// Refuse it, naming what differs (the default).
    case refuse
    /// Let the entry `name` alone differ from the sealed index, so that it can be set
    /// again or removed (which seals the index anew); anything else is refused.
    case allowEntry(String)
    /// Accept the vault as it is (`Vault.reseal`): every entry must still
    /// authenticate under the key, and a damaged generation record is replaced.
    case accept
}

/// An entry as `list` shows it: never a value.
public struct VaultEntry: Sendable, Equatable {
    public enum Kind: String, Sendable { case secret, object }
    public let name: String
    public let kind: Kind
    public let created: Date
    public let updated: Date
    /// For an object: its id and size.
    public let object: VaultObjectInfo?
}

/// A stored object.
public struct VaultObjectInfo: Sendable, Equatable {
    /// `obj_` and the SHA-256 of the object file (its ciphertext), in hex.
    public let id: String
    /// The name it was stored under; nil if it has only its id.
    public let name: String?
    /// Plaintext bytes.
    public let size: UInt64
}

/// What `setSecret` did.
public enum VaultSetOutcome: Sendable, Equatable {
    case created
    case replaced
}
