import Foundation
import ScriptHost

// Prints the text of Sources/CLuaChunks/prelude_bytecode.c for the current preludes.
// scripts/generate-prelude-bytecode runs it and writes the file; it is a build tool,
// never installed.
guard let text = PreludeBytecodeFile.generatedSource() else {
    FileHandle.standardError.write(Data("prelude-bytecode: a prelude does not compile with the linked Lua: fix Prelude.source or Prelude.dataSource\n".utf8))
    exit(1)
}
FileHandle.standardOutput.write(Data(text.utf8))
