import Foundation

/// A run's export folder, held open: every export file is created, checked and renamed
/// relative to this one folder (`openat`, `fstatat`, `renameat`), and export names hold
/// no `/`, so no export lands outside it whatever is planted in it.
///
/// - A file is written under a temporary name, `.NAME.<16 random hex digits>.partial`,
///   created exclusively (`O_CREAT | O_EXCL | O_NOFOLLOW`, mode 0600): a link planted at
///   that name makes the creation fail instead of redirecting the write.
/// - It becomes `NAME` by a rename within the folder, after `fsync`, and only if `NAME`
///   is absent or a plain file with a single link: a symbolic link, a folder, a file
///   with other hard links or any other kind of file is refused and left untouched.
///   A rename replaces the directory entry and never writes through it, so even a link
///   planted between that check and the rename cannot redirect the contents.
final class ExportFolder {
    /// The folder's path, for messages and `ExportedFile.path`.
    let path: String
    private let fd: Int32

    /// Opens the folder `path` (which must exist).
    init(path: String) throws {
        self.path = path
        fd = open(path, O_RDONLY | O_DIRECTORY | O_CLOEXEC)
        guard fd >= 0 else { throw ExportIOError("cannot open the export folder \(path): \(Self.reason())") }
    }

    deinit { close(fd) }

    /// The absolute path of `name` in the folder.
    func path(of name: String) -> String { path + "/" + name }

    /// Creates a new temporary file for the export `name`; returns its descriptor
    /// (write-only) and its name.
    func createTemporary(for name: String) throws -> (fd: Int32, name: String) {
        for _ in 0..<8 {
            let random = String(UInt64.random(in: .min ... .max), radix: 16).leftPadded(to: 16)
            let temporary = ".\(name).\(random).partial"
            let file = openat(fd, temporary, O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0o600)
            if file >= 0 { return (file, temporary) }
            if errno != EEXIST { throw ExportIOError("cannot create \(path(of: temporary)): \(Self.reason())") }
        }
        throw ExportIOError("cannot create a temporary file for \(path(of: name)): every name tried already exists")
    }

    /// Throws unless `name` is absent or a regular file with one link (so renaming onto
    /// it replaces nothing but that file).
    func checkReplaceable(_ name: String) throws {
        var info = stat()
        guard fstatat(fd, name, &info, AT_SYMLINK_NOFOLLOW) == 0 else {
            if errno == ENOENT { return }
            throw ExportIOError("cannot check \(path(of: name)): \(Self.reason())")
        }
        let what: String
        switch info.st_mode & S_IFMT {
        case S_IFLNK: what = "is a symbolic link"
        case S_IFDIR: what = "is a folder"
        case S_IFREG where info.st_nlink > 1: what = "has \(info.st_nlink) hard links (other names share its contents)"
        case S_IFREG: return
        default: what = "is not a regular file"
        }
        throw ExportIOError("""
            \(path(of: name)) \(what); an export replaces only a plain file, so it was left untouched \
            (remove it, or choose another export name)
            """)
    }

    /// Renames the temporary file to `name` (after `checkReplaceable`) and syncs the folder.
    /// `removingIncomplete`: also removes `name.incomplete` (what an earlier, stopped pass
    /// kept of this export) if it is a plain file, now that the export is whole.
    func moveIntoPlace(_ temporary: String, as name: String, removingIncomplete: Bool = true) throws {
        try checkReplaceable(name)
        guard renameat(fd, temporary, fd, name) == 0 else {
            throw ExportIOError("cannot rename \(path(of: temporary)) to \(path(of: name)): \(Self.reason())")
        }
        if removingIncomplete {
            let stale = name + ExportedFile.incompleteSuffix
            var info = stat()
            if fstatat(fd, stale, &info, AT_SYMLINK_NOFOLLOW) == 0, info.st_mode & S_IFMT == S_IFREG {
                _ = unlinkat(fd, stale, 0)
            }
        }
        _ = fsync(fd)
    }

    /// Removes a temporary file (errors ignored: it may be gone already).
    func remove(_ temporary: String) {
        _ = unlinkat(fd, temporary, 0)
    }

    private static func reason() -> String { String(cString: strerror(errno)) }
}
