import Foundation
import ScriptHost

/// `hubscript new NAME`: a recipe and its test, ready to edit.
struct NewCommand: Command {
    static let configuration = CommandConfiguration(
        name: "new",
        abstract: "Create a recipe (NAME.lua) and its test (NAME_test.lua) from a template.",
        usage: "NAME [--force]",
        options: [OptionSpec(name: "force", valueName: nil,
                             help: "Replace an existing .luarc.json and .luacheckrc (never the recipe or its test).")],
        discussion: """
        NAME is the recipe's name: lowercase letters, digits and dashes, starting with a
        letter (e.g. rotate-keys), optionally after a folder that exists (ops/rotate-keys).
        Writes NAME.lua (a manifest with name, version, description, params, needs and
        limits, and a body reading one user) and NAME_test.lua (a test of it); both pass
        hubscript check and hubscript test as created. Never overwrites a file: exits 1
        if either exists, 2 if NAME is not a valid name.
        Beside them, for editors: lua-language-server definitions in .hubscript/luals/
        (hubscript docs luals), a .luarc.json pointing at them and a .luacheckrc declaring
        what a recipe can see (both kept if they exist, unless --force).
        """)

    let folder: String
    let name: String
    let force: Bool

    init(_ arguments: ParsedArguments) throws {
        guard let given = arguments.positionals.first else { throw UsageError("missing the recipe NAME (e.g. rotate-keys)") }
        guard arguments.positionals.count == 1 else {
            throw UsageError("give one NAME, not \(arguments.positionals.count)")
        }
        var name = (given as NSString).lastPathComponent
        if name.hasSuffix(".lua") { name = String(name.dropLast(4)) }
        let folder = (given as NSString).deletingLastPathComponent
        self.folder = folder.isEmpty ? "." : folder
        if let problem = Self.problem(with: name) { throw UsageError("'\(name)' is not a recipe name: \(problem)") }
        self.name = name
        force = arguments.flag("force")
    }

    /// Why `name` cannot be a recipe name, or nil.
    static func problem(with name: String) -> String? {
        if name.isEmpty { return "it is empty" }
        guard let first = name.unicodeScalars.first, ("a"..."z").contains(first) else {
            return "it must start with a lowercase letter (a-z)"
        }
        if let bad = name.unicodeScalars.first(where: { !(("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-") }) {
            return "'\(bad)' is not allowed (use lowercase letters, digits and dashes)"
        }
        if name.hasSuffix("-") { return "it must not end with a dash" }
        if name.hasSuffix("-test") || name.hasSuffix("_test") { return "a name ending in test would read as a test file" }
        if name.count > 64 { return "it is longer than 64 characters" }
        return nil
    }

    func run() throws -> Int32 {
        var isFolder: ObjCBool = false
        guard FileManager.default.fileExists(atPath: folder, isDirectory: &isFolder), isFolder.boolValue else {
            throw UsageError("no such folder: \(folder)")
        }
        let prefix = folder == "." ? "" : folder.hasSuffix("/") ? folder : folder + "/"
        let recipePath = prefix + name + ".lua", testPath = prefix + name + "_test.lua"
        let existing = [recipePath, testPath].filter { FileManager.default.fileExists(atPath: $0) }
        if !existing.isEmpty {
            Console.err("hubscript new: \(existing.joined(separator: " and ")) already exist\(existing.count == 1 ? "s" : ""); nothing was written\n")
            return ExitCode.recipeFailed
        }
        for (path, text) in [(recipePath, Self.recipe(name)), (testPath, Self.test(name))] {
            // O_EXCL: a file that appeared meanwhile is not overwritten.
            let fd = open(path, O_WRONLY | O_CREAT | O_EXCL, 0o644)
            guard fd >= 0 else {
                Console.err("hubscript new: cannot create \(path): \(String(cString: strerror(errno))); nothing more was written\n")
                return ExitCode.recipeFailed
            }
            let handle = FileHandle(fileDescriptor: fd, closeOnDealloc: true)
            handle.write(Data(text.utf8))
            try? handle.close()
            Console.out("created \(path)\n")
        }
        do {
            for outcome in try EditorSetup.write(prefix: prefix, plugins: try BuiltinPlugins.documented(), force: force) {
                Console.out(outcome.line + "\n")
            }
        } catch {
            Console.err("hubscript new: \(recipePath) and \(testPath) were created, but not the editor files: \(error)\n")
            return ExitCode.recipeFailed
        }
        Console.out("next: edit \(recipePath), then run hubscript test \(testPath)\n")
        return ExitCode.success
    }

    static func recipe(_ name: String) -> String {
        """
        -- \(name): describe here what the recipe does, for whom, and whether it is safe to run again.
        recipe {
          name = "\(name)",
          version = "0.1.0",
          description = "Show a user's status (a starting point: edit this recipe).",
          params = {
            user = { type = "string", required = true, description = "usr_… id or email" },
          },
          needs = { "users.list" },
          limits = { writes = 10, timeout = 60 },
        }

        local user = hub.users.get(params.user)
        print(("%s is %s (%s)"):format(user.email, user.status, user.id))

        """
    }

    static func test(_ name: String) -> String {
        """
        -- Tests of \(name).lua: run them with hubscript test \(name)_test.lua (docs/recipe-tests.md).

        test.case("prints the user's status", function()
          local s = test.sandbox {}
          local r = s:run("\(name).lua", { user = "ada@example.com" })
          expect(r).to_succeed()
          expect(r.output).to_equal { "ada@example.com is active (usr_ada)" }
          expect(r.writes).to_be(0)
        end)

        test.case("refuses a user that does not exist", function()
          local s = test.sandbox {}
          local r = s:run("\(name).lua", { user = "nobody@example.com" })
          expect(r).to_fail_with("not_found")
        end)

        """
    }
}
