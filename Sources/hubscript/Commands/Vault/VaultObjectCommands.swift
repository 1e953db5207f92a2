import Foundation
import ScriptHost
import Vault

/// `hubscript vault put-object FILE [--name NAME]`: prints the object's id.
struct VaultPutObjectCommand: Command {
    static let configuration = CommandConfiguration(
        name: "vault put-object", abstract: "Store a file encrypted in the vault; print its object id.",
        usage: "FILE [--name NAME] [--key-file PATH | --passphrase] [--vault-dir DIR]",
        options: [OptionSpec(name: "name", valueName: "name", help: "Also store it under this name (replacing an object of that name).")]
            + VaultCommands.specs,
        discussion: """
        FILE is streamed in 64 KiB chunks (- reads standard input) into objects/ in the
        vault's folder, named by the SHA-256 of its ciphertext: obj_<64 hex digits>.
        \(VaultCommands.exitCodes)
        """)

    let location: VaultCommands.Location
    let file: String
    let name: String?

    init(_ arguments: ParsedArguments) throws {
        file = try VaultCommands.name(arguments, what: "FILE")
        name = arguments.value("name")
        if let name { try VaultName.validate(name) }
        location = try VaultCommands.Location(arguments)
    }

    func run() throws -> Int32 {
        let info = try location.open().putObject(file: file, name: name)
        Console.out(info.id + "\n")
        return ExitCode.success
    }
}

/// `hubscript vault get-object ID --out FILE`.
struct VaultGetObjectCommand: Command {
    static let configuration = CommandConfiguration(
        name: "vault get-object", abstract: "Decrypt an object to a file (complete and verified, or not at all).",
        usage: "ID|NAME --out FILE [--key-file PATH | --passphrase] [--vault-dir DIR]",
        options: [OptionSpec(name: "out", valueName: "file", help: "Where to write it (mode 0600; replaced only once the object is verified).")]
            + VaultCommands.specs,
        discussion: """
        Every chunk is authenticated and the end of the object checked before FILE
        appears; on any error FILE is left as it was.
        \(VaultCommands.exitCodes)
        """)

    let location: VaultCommands.Location
    let ref: String
    let out: String

    init(_ arguments: ParsedArguments) throws {
        ref = try VaultCommands.name(arguments, what: "object ID or NAME")
        guard let out = arguments.value("out") else { throw UsageError("--out FILE is required (the object is never printed)") }
        self.out = out
        location = try VaultCommands.Location(arguments)
    }

    func run() throws -> Int32 {
        let info = try location.open().getObject(ref, to: out)
        Console.out("Wrote \(info.size) bytes to \(TerminalText.field(out)).\n")
        return ExitCode.success
    }
}

/// `hubscript vault verify [NAME…]`: authenticates entries without showing them.
struct VaultVerifyCommand: Command {
    static let configuration = CommandConfiguration(
        name: "vault verify", abstract: "Check that the key opens the vault and every entry (or those named) authenticates.",
        usage: "[NAME…] [--key-file PATH | --passphrase] [--vault-dir DIR]",
        options: VaultCommands.specs,
        discussion: """
        Decrypts each entry in memory and drops it; nothing is printed but counts. For
        objects, also checks that the file is there and hashes to its id.
        \(VaultCommands.exitCodes)
        """)

    let location: VaultCommands.Location
    let names: [String]

    init(_ arguments: ParsedArguments) throws {
        names = arguments.positionals
        location = try VaultCommands.Location(arguments)
    }

    func run() throws -> Int32 {
        let (secrets, objects) = try location.open().verify(names)
        Console.out("Verified \(secrets) \(secrets == 1 ? "secret" : "secrets") and \(objects) \(objects == 1 ? "object" : "objects") in \(VaultCommands.path(location.folder)).\n")
        return ExitCode.success
    }
}
