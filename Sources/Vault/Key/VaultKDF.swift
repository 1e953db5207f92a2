/// Argon2id13 costs for a passphrase vault (`crypto_pwhash`). They are stored in the
/// vault's header with the salt, so a vault always opens with the costs it was made
/// with.
public struct VaultKDF: Sendable, Equatable, CustomStringConvertible {
    /// Passes over memory (`opslimit`).
    public var opsLimit: UInt64
    /// Bytes of memory (`memlimit`).
    public var memLimit: UInt64

    public init(opsLimit: UInt64, memLimit: UInt64) {
        self.opsLimit = opsLimit
        self.memLimit = memLimit
    }

    /// libsodium's INTERACTIVE: 2 passes, 64 MiB (about 0.1 s here).
    public static let interactive = VaultKDF(opsLimit: 2, memLimit: 64 << 20)
    /// libsodium's MODERATE: 3 passes, 256 MiB (about 0.5–1 s here). The default.
    public static let moderate = VaultKDF(opsLimit: 3, memLimit: 256 << 20)
    /// libsodium's SENSITIVE: 4 passes, 1 GiB (several seconds).
    public static let sensitive = VaultKDF(opsLimit: 4, memLimit: 1 << 30)

    /// The largest costs a header may ask for; more is taken for a damaged header
    /// rather than spent (a header could otherwise make `open` allocate anything).
    static let maxOpsLimit: UInt64 = 64
    static let maxMemLimit: UInt64 = 4 << 30

    /// Whether this build derives keys with these costs.
    var isAccepted: Bool {
        Sodium.opsLimitRange.contains(opsLimit) && opsLimit <= Self.maxOpsLimit
            && memLimit >= Sodium.memLimitMinimum && memLimit <= Self.maxMemLimit
    }

    public var description: String { "Argon2id, \(opsLimit) passes, \(memLimit >> 20) MiB" }
}
