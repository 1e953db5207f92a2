import Foundation
import HubClient
import RunJournal

/// A library kept in a git repository and pinned to one commit:
/// `libraries = { sec = "git+file:///srv/git/security.git@<40 hex digits>" }`.
///
/// The commit is the pin: a branch, a tag or a short id is refused (what they name
/// moves), so a new commit upstream changes nothing until the configuration names it.
/// Each commit is fetched once with the system's `git` into the state folder
/// (`libraries/git/<digest of the URL>/<commit>/`), atomically: into a scratch folder
/// first, checked to be exactly that commit, then renamed into place — a fetch killed
/// halfway leaves only a scratch folder, which is never used. The files of the
/// checkout are pinned in `hubscript.lock` like a folder library's, so a file changed
/// in the state folder after the fetch is refused before it runs.
public struct GitLibrarySource: Sendable, Equatable {
    /// The repository URL, without `git+`.
    public let url: String
    /// The full commit id (40 hex digits; 64 for a SHA-256 repository).
    public let commit: String

    /// The URL schemes fetched (`git+file://`, `git+https://`, `git+ssh://`).
    static let schemes = ["file://", "https://", "ssh://"]

    /// The source `spec` names, nil when it is not a git source (no `git+`). Throws a
    /// message (without the `libraries.NAME: ` prefix) for a malformed one.
    static func parse(_ spec: String) throws -> GitLibrarySource? {
        guard spec.hasPrefix("git+") else { return nil }
        let rest = String(spec.dropFirst(4))
        guard let scheme = schemes.first(where: { rest.hasPrefix($0) }) else {
            throw GitLibraryError("\"\(spec)\" is not a git source hubscript fetches (use git+file://, git+https:// or git+ssh://, then @COMMIT)")
        }
        guard !rest.unicodeScalars.contains(where: { $0.value < 0x20 || $0.value == 0x7F }) else {
            throw GitLibraryError("the git source holds a control character; write the URL on one line, without them")
        }
        let at = rest.lastIndex(of: "@")
        let pin = at.map { String(rest[rest.index(after: $0)...]) } ?? ""
        guard let at, !pin.isEmpty, !pin.contains("/"), !pin.contains(":") else {
            throw GitLibraryError("\(spec) names no commit: pin it as git+\(rest)@COMMIT, the full commit id (git rev-parse HEAD in the repository shows it)")
        }
        let url = String(rest[..<at])
        guard url.count > scheme.count else { throw GitLibraryError("\(spec) names no repository") }
        let hex = pin.unicodeScalars.allSatisfy { ("0"..."9").contains($0) || ("a"..."f").contains($0) }
        guard hex, pin.count == 40 || pin.count == 64 else {
            throw GitLibraryError("'\(pin)' is not a full commit id: a git library is pinned to a commit, 40 lowercase hex digits "
                + "(git rev-parse \(pin) in the repository shows it), never a branch, a tag or a short id, which can move")
        }
        return GitLibrarySource(url: url, commit: pin)
    }
}

/// A git library's problem, in words; the configuration reader adds `config FILE: libraries.NAME: `.
struct GitLibraryError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Checkouts of git libraries in the state folder: fetched once per commit, atomically,
/// and verified.
enum GitCheckout {
    /// Where `source`'s commit is checked out; it may not exist yet.
    static func folder(of source: GitLibrarySource, state: StateDirectory) throws -> URL {
        folder(of: source, libraries: try state.folder("libraries"))
    }

    /// Where `source`'s commit is checked out inside the state folder's `libraries`
    /// folder `libraries` (neither is created).
    static func folder(of source: GitLibrarySource, libraries: URL) -> URL {
        libraries.appendingPathComponent("git", isDirectory: true)
            .appendingPathComponent(String(Digest.sha256Hex(source.url).prefix(16)), isDirectory: true)
            .appendingPathComponent(source.commit, isDirectory: true)
    }

    /// The checkout of `source` for library `name`: the one in the state folder
    /// (`fetched` false), or a new one fetched and checked now.
    static func checkout(_ source: GitLibrarySource, name: String, state: StateDirectory) throws -> (folder: URL, fetched: Bool) {
        let target = try folder(of: source, state: state)
        if FileManager.default.fileExists(atPath: target.path) { return (target, false) }
        let git = try GitCommand.find(forLibrary: name)
        let parent = target.deletingLastPathComponent()
        try FileManager.default.createDirectory(at: parent, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        removeStaleScratch(in: parent)
        let scratch = parent.appendingPathComponent(".fetch-\(source.commit.prefix(12))-\(UUID().uuidString)", isDirectory: true)
        defer { try? FileManager.default.removeItem(at: scratch) }
        try fetch(source, into: scratch, name: name, git: git)
        do {
            try FileManager.default.moveItem(at: scratch, to: target)
        } catch where FileManager.default.fileExists(atPath: target.path) {
            // Another process put the same commit in place first: use that one.
        }
        return (target, true)
    }

    /// Fetches `source.commit` into the new folder `scratch` (by its id; else, from a
    /// server that serves no commit by id, its branches and tags) and checks it out.
    static func fetch(_ source: GitLibrarySource, into scratch: URL, name: String, git: GitCommand) throws {
        func fail(_ what: String, _ result: GitCommand.Result) -> GitLibraryError {
            GitLibraryError("\(what) (git: \(result.reason))")
        }
        // Only the fetch itself reads your git configuration (credentials, proxies): the
        // checkout is made and checked without it (no init template, no filter driver).
        let initialized = try git.run(["init", "-q", "--", scratch.path], hermetic: true)
        guard initialized.status == 0 else { throw fail("cannot make a checkout in \(scratch.path)", initialized) }
        let fetched = try git.run(["fetch", "-q", "--no-tags", "--depth", "1", "--", source.url, source.commit], in: scratch)
        if fetched.status != 0 {
            // Tell a missing commit from a repository that cannot be read; a server that
            // serves no commit by its id gets its branches and tags fetched instead.
            let listed = try git.run(["ls-remote", "-q", "--", source.url], in: scratch)
            guard listed.status == 0 else { throw fail("cannot read the repository \(source.url)", listed) }
            let all = try git.run(["fetch", "-q", "--no-tags", "--", source.url,
                                   "+refs/heads/*:refs/remotes/origin/*", "+refs/tags/*:refs/remotes/origin/tags/*"], in: scratch)
            let present = try git.run(["cat-file", "-e", source.commit + "^{commit}"], in: scratch)
            guard all.status == 0, present.status == 0 else {
                throw GitLibraryError("the repository \(source.url) has no commit \(source.commit); "
                    + "pin the library to a commit that exists there (git log in the repository lists them)")
            }
        }
        let checkedOut = try git.run(["checkout", "-q", "--detach", source.commit], in: scratch, hermetic: true)
        guard checkedOut.status == 0 else { throw fail("cannot check out \(source.commit) of \(source.url)", checkedOut) }
        try check(scratch, is: source, name: name, git: git)
    }

    /// Refuses `folder` unless its HEAD is `source.commit` and its files are that
    /// commit's: none changed, added or removed.
    static func check(_ folder: URL, is source: GitLibrarySource, name: String, git: GitCommand) throws {
        // The checkout's own configuration first, read without running anything: a fetch
        // writes only `core.*` basics there; anything else (a filter driver, which
        // `status` would run on the files, an include, …) was put there afterwards.
        let settings = try git.run(["config", "--local", "--list", "--name-only"], in: folder, hermetic: true)
        guard settings.status == 0 else {
            throw GitLibraryError("cannot check the checkout \(folder.path) (git: \(settings.reason)); delete that folder and hubscript fetches the commit again")
        }
        let foreign = settings.stdout.split(separator: "\n").map { $0.lowercased() }.filter { !fetchSettings.contains($0) }
        guard foreign.isEmpty else {
            let shown = foreign.prefix(5).joined(separator: ", ") + (foreign.count > 5 ? ", …" : "")
            throw GitLibraryError("the checkout \(folder.path) has git settings a fetch never writes (\(shown)); it was changed after the fetch. "
                + "Delete that folder and hubscript fetches the commit again")
        }
        let head = try git.run(["rev-parse", "--verify", "HEAD^{commit}"], in: folder, hermetic: true)
        let found = head.stdout.trimmingCharacters(in: .whitespacesAndNewlines)
        guard head.status == 0, found == source.commit else {
            throw GitLibraryError("the checkout \(folder.path) is not commit \(source.commit) (HEAD: \(head.status == 0 ? found : head.reason)); "
                + "delete that folder and hubscript fetches the commit again")
        }
        // Ignored files count too (a fresh checkout has none: nothing builds in it), and so
        // does any file the index was told not to look at (skip-worktree or
        // assume-unchanged hide an edit from `status`).
        let status = try git.run(["status", "--porcelain", "--untracked-files=all", "--ignored=matching"], in: folder, hermetic: true)
        let flags = try git.run(["ls-files", "-v"], in: folder, hermetic: true)
        guard status.status == 0, flags.status == 0 else {
            let reason = status.status != 0 ? status.reason : flags.reason
            throw GitLibraryError("cannot check the checkout \(folder.path) (git: \(reason)); delete that folder and hubscript fetches the commit again")
        }
        let hidden = flags.stdout.split(separator: "\n").filter { line in
            guard let tag = line.first else { return false }
            return tag == "S" || tag.isLowercase
        }.map { String($0.dropFirst(2)) }
        let differing = status.stdout.split(separator: "\n").map { String($0.dropFirst(3)) } + hidden
        guard differing.isEmpty else {
            let shown = differing.prefix(5).joined(separator: ", ") + (differing.count > 5 ? ", …" : "")
            throw GitLibraryError("the checkout \(folder.path) differs from commit \(source.commit) "
                + "(\(differing.count) file\(differing.count == 1 ? "" : "s"): \(shown)); it was changed after the fetch. "
                + "Delete that folder and hubscript fetches the commit again")
        }
    }

    /// What `git init` and the fetch write in a checkout's `.git/config` (lowercased, as
    /// `git config --list --name-only` shows them).
    static let fetchSettings: Set<String> = [
        "core.repositoryformatversion", "core.filemode", "core.bare", "core.logallrefupdates",
        "core.symlinks", "core.ignorecase", "core.precomposeunicode", "extensions.objectformat",
    ]

    /// Scratch folders of fetches that never finished (a process killed mid-fetch),
    /// older than an hour, are removed; younger ones may belong to a running fetch.
    static func removeStaleScratch(in parent: URL) {
        let names = (try? FileManager.default.contentsOfDirectory(atPath: parent.path)) ?? []
        for name in names where name.hasPrefix(".fetch-") {
            let url = parent.appendingPathComponent(name)
            let modified = (try? FileManager.default.attributesOfItem(atPath: url.path))?[.modificationDate] as? Date
            if let modified, Date().timeIntervalSince(modified) > 3600 { try? FileManager.default.removeItem(at: url) }
        }
    }
}
