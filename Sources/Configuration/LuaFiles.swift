import Foundation

/// The `.lua` files below a folder (library pins, recipe tests).
public enum LuaFiles {
    /// Paths relative to `folder`, sorted; hidden files and folders (`.build`, `.git`)
    /// are skipped.
    public static func below(_ folder: URL) -> [String] {
        let base = folder.standardizedFileURL.path
        var found: [String] = []
        let enumerator = FileManager.default.enumerator(at: folder, includingPropertiesForKeys: nil,
                                                        options: [.skipsHiddenFiles])
        while let url = enumerator?.nextObject() as? URL {
            let path = url.standardizedFileURL.path
            guard path.hasSuffix(".lua"), path.hasPrefix(base + "/") else { continue }
            // A folder named like a module (`dir.lua/`) is no module: skip it, not the library.
            var isFolder: ObjCBool = false
            if FileManager.default.fileExists(atPath: path, isDirectory: &isFolder), isFolder.boolValue,
               (try? FileManager.default.destinationOfSymbolicLink(atPath: path)) == nil { continue }
            found.append(String(path.dropFirst(base.count + 1)))
        }
        return found.sorted()
    }
}
