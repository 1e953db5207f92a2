/// A vault operation that failed. Every failure leaves the vault as it was: the
/// message says what went wrong and, where there is one, what to do.
///
/// `code` is an open set (compare with the codes you handle); `entry` names the entry
/// or object concerned, when there is one.
public struct VaultError: Error, Sendable, Equatable, CustomStringConvertible {
    public struct Code: RawRepresentable, Hashable, Sendable, CustomStringConvertible {
        public let rawValue: String
        public init(rawValue: String) { self.rawValue = rawValue }
        public var description: String { rawValue }

        /// The key does not open the vault (key check failed); nothing was read.
        public static let wrongKey = Code(rawValue: "wrong_key")
        /// The key source is unusable: a key file with loose permissions, bad length
        /// or encoding, a missing passphrase, the wrong kind of key for this vault.
        public static let badKey = Code(rawValue: "bad_key")
        /// An entry or object failed authentication (altered, moved or corrupted).
        public static let tampered = Code(rawValue: "tampered")
        /// The vault file is an older copy of itself as a whole: its generation is below
        /// the one this machine remembers having seen.
        public static let rolledBack = Code(rawValue: "rolled_back")
        /// An entry is an older sealed copy of itself, not the one the vault last sealed.
        public static let entryRolledBack = Code(rawValue: "entry_rolled_back")
        /// An entry that the vault's sealed index does not list (put in outside hubscript).
        public static let entryAdded = Code(rawValue: "entry_added")
        /// An entry the vault's sealed index lists is missing from the file.
        public static let entryRemoved = Code(rawValue: "entry_removed")
        /// The file that remembers the vault's generation on this machine is damaged.
        public static let generationMemoryDamaged = Code(rawValue: "generation_memory_damaged")
        /// The file ends early.
        public static let truncated = Code(rawValue: "truncated")
        /// Written by a newer hubscript (a format version this build does not read).
        public static let newerFormat = Code(rawValue: "newer_format")
        /// Not a vault file (bad magic).
        public static let badMagic = Code(rawValue: "bad_magic")
        /// Structurally invalid although complete (bad lengths, duplicate names, …).
        public static let corrupt = Code(rawValue: "corrupt")
        /// The file or folder cannot be read or written (permissions, I/O).
        public static let unreadable = Code(rawValue: "unreadable")
        public static let ioError = Code(rawValue: "io_error")
        /// No vault at the location.
        public static let noVault = Code(rawValue: "no_vault")
        /// `init` where a vault already is.
        public static let alreadyExists = Code(rawValue: "already_exists")
        /// No entry or object of that name or id.
        public static let notFound = Code(rawValue: "not_found")
        /// An entry name that is not allowed.
        public static let invalidName = Code(rawValue: "invalid_name")
        /// A value that cannot be stored (empty, too large).
        public static let invalidValue = Code(rawValue: "invalid_value")
        /// Another process holds the vault's lock.
        public static let locked = Code(rawValue: "locked")
        /// A writer used after finish or abort, libsodium unavailable, …
        public static let internalError = Code(rawValue: "internal_error")
    }

    public let code: Code
    public let message: String
    public let entry: String?

    public init(_ code: Code, _ message: String, entry: String? = nil) {
        self.code = code
        self.message = message
        self.entry = entry
    }

    public var description: String { message }
}
