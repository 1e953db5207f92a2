import HubClient
import ScriptHost
import RecipeModules

/// `needs` against the permission catalogue, before anything connects: a typo is a
/// manifest error (exit 2) with a did-you-mean, not a capability denial at run time.
enum NeedsCheck {
    /// One line per unknown permission, `file:line: manifest: needs: unknown permission
    /// 'x' (did you mean 'y'?)`, then the catalogue; nil when every name is known. The
    /// line is the first that quotes the name (the manifest's own line otherwise).
    static func problem(in file: RecipeFile, manifest: RecipeManifest) -> String? {
        let unknown = HubGate.unknownPermissions(in: manifest.needs)
        guard !unknown.isEmpty else { return nil }
        let lines = file.source.split(separator: "\n", omittingEmptySubsequences: false)
        var text = unknown.map { name, hint in
            let line = lines.firstIndex { $0.contains("\"\(name)\"") || $0.contains("'\(name)'") }.map { $0 + 1 }
            let location = file.displayPath + (line.map { ":\($0)" } ?? "")
            return "\(location): manifest: needs: unknown permission '\(name)'\(hint)"
        }.joined(separator: "\n")
        text += "\nknown permissions: " + HubGate.knownPermissions.joined(separator: ", ")
        return text
    }
}
