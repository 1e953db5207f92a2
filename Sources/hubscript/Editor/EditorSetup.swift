import Foundation
import ScriptHost

/// The editor files `hubscript new` writes beside a recipe: lua-language-server
/// definitions in `.hubscript/luals/` (regenerated: the folder is hubscript's), a
/// `.luarc.json` pointing at them and a `.luacheckrc`. An existing `.luarc.json` or
/// `.luacheckrc` is someone's configuration: it is kept unless `force`, and the result
/// says so.
enum EditorSetup {
    static let definitionsFolder = ".hubscript/luals"

    enum Outcome: Equatable {
        case created(String)
        case replaced(String)
        case kept(String)
        case refreshed(String)

        var line: String {
            switch self {
            case .created(let path): "created \(path)"
            case .replaced(let path): "replaced \(path) (--force)"
            case .kept(let path): "kept \(path): it exists (--force replaces it)"
            case .refreshed(let path): "wrote \(path)/ (lua-language-server definitions)"
            }
        }
    }

    /// Writes the editor files into `folder` ("" or a path ending in "/").
    static func write(prefix: String, plugins: [Plugin], force: Bool) throws -> [Outcome] {
        var outcomes: [Outcome] = []
        let definitions = prefix + definitionsFolder
        // A link in a cloned folder must not steer the definitions elsewhere.
        for path in [prefix + ".hubscript", definitions] {
            var info = stat()
            if lstat(path, &info) == 0, (info.st_mode & S_IFMT) == S_IFLNK {
                throw DefinitionsError(.folderUnwritable, "\(path) is a symbolic link; hubscript writes its definitions only into "
                    + "a folder of its own: remove the link and run again")
            }
        }
        try LuaLSDefinitions.write(LuaLSDefinitions.files(plugins: plugins), into: URL(fileURLWithPath: definitions))
        outcomes.append(.refreshed(definitions))
        for (name, text) in [(".luarc.json", luarc(plugins: plugins)), (".luacheckrc", LuacheckConfig.text(plugins: plugins))] {
            let path = prefix + name
            let exists = FileManager.default.fileExists(atPath: path)
            if exists && !force {
                outcomes.append(.kept(path))
                continue
            }
            do {
                try Data(text.utf8).write(to: URL(fileURLWithPath: path), options: .atomic)
            } catch {
                throw DefinitionsError(.folderUnwritable, "cannot write \(path): \(error.localizedDescription)")
            }
            outcomes.append(exists ? .replaced(path) : .created(path))
        }
        return outcomes
    }

    /// lua-language-server's settings: Lua 5.4, the definitions as a library, the
    /// standard libraries a recipe does not have turned off, hubscript's globals known.
    static func luarc(plugins: [Plugin]) -> String {
        let globals = (["recipe"] + plugins.map(\.module).sorted() + ["test", "expect"]).map { "\"\($0)\"" }
        return """
            {
              "$schema": "https://raw.githubusercontent.com/LuaLS/vscode-lua/master/setting/schema.json",
              "runtime.version": "Lua 5.4",
              "runtime.builtin": { "io": "disable", "os": "disable", "debug": "disable", "package": "disable" },
              "workspace.library": ["\(definitionsFolder)"],
              "workspace.checkThirdParty": false,
              "diagnostics.globals": [\(globals.joined(separator: ", "))]
            }

            """
    }
}
