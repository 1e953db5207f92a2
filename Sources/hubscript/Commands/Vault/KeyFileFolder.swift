import Foundation
import SystemText
import Vault

/// The folder a new key file goes in (`vault init --key-file ~/.config/hubscript/vault.key`
/// on a fresh home, where `~/.config/hubscript` does not exist yet).
enum KeyFileFolder {
    /// Creates the folders missing on the way to `keyFile`'s folder, outermost first,
    /// each with mode 0700 (whatever the umask): only the missing ones, so a folder that
    /// exists keeps its mode (never loosened, never tightened behind the person's back).
    /// Returns the folders created. A folder created by a process killed halfway is
    /// simply found next time.
    /// - Throws: `VaultError` `.ioError` naming the folder that could not be made and why.
    @discardableResult
    static func createMissing(for keyFile: String) throws -> [String] {
        let folder = URL(fileURLWithPath: AbsolutePath.of(keyFile)).deletingLastPathComponent().path
        var missing: [String] = []
        var path = folder
        // Walk up to the first folder that exists (anything there, even a file: mkdir
        // below then says what is wrong with it).
        while path != "/", path != "", !exists(path) {
            missing.append(path)
            path = (path as NSString).deletingLastPathComponent
        }
        var created: [String] = []
        for path in missing.reversed() {
            if mkdir(path, 0o700) != 0 {
                let code = errno
                if code == EEXIST, isFolder(path) { continue }   // made meanwhile by someone else: theirs
                throw VaultError(.ioError, """
                    cannot create the folder \(path) for the key file \(keyFile): \
                    \(String(cString: strerror(code))) (create it with mode 0700, or give --key-file another path)
                    """)
            }
            // The umask may have taken bits off: this folder is ours, make it exactly 0700.
            _ = chmod(path, 0o700)
            created.append(path)
        }
        return created
    }

    private static func exists(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0
    }

    private static func isFolder(_ path: String) -> Bool {
        var status = stat()
        return lstat(path, &status) == 0 && (status.st_mode & S_IFMT) == S_IFDIR
    }
}
