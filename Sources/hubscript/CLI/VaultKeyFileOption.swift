import Foundation
import SystemText
import Synchronization

/// `--key-file PATH` on the commands that run a recipe (run, plan, apply, runs resume):
/// the key file that opens the vault when the run first needs it (a secret, a profile's
/// `api_key_ref`, a session, a Dispatch token), as `hubscript vault … --key-file` takes
/// it. It wins over `$HUBSCRIPT_VAULT_KEY`, `$HUBSCRIPT_VAULT_KEY_FILE` and
/// `$HUBSCRIPT_VAULT_PASSPHRASE`; the file is read only when the vault is opened, and
/// a missing or loose (not 0600) file is refused then, with the vault's own message.
enum VaultKeyFileOption {
    static let spec = OptionSpec(
        name: "key-file", valueName: "path",
        help: "Open the vault with this key file (mode 0600) if the run needs it (default: $HUBSCRIPT_VAULT_KEY, $HUBSCRIPT_VAULT_KEY_FILE, $HUBSCRIPT_VAULT_PASSPHRASE).")

    /// The command line's key file, as an absolute path; nil: the environment's key.
    static var current: String? { chosen.withLock { $0 } }

    /// Reads `--key-file` from `arguments` for the rest of the process (one command a process).
    /// - Throws: `UsageError` for an empty path.
    static func read(_ arguments: ParsedArguments) throws {
        guard let path = arguments.value(spec.name) else { return }
        guard !path.isEmpty else { throw UsageError("--key-file takes the path of a key file, got ''") }
        chosen.withLock { $0 = AbsolutePath.of(path) }
    }

    private static let chosen = Mutex<String?>(nil)
}
