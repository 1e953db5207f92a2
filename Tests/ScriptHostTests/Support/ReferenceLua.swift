import Foundation
import XCTest

/// Plain Lua 5.4 — the system's liblua5.4 with its standard libraries and no sandbox —
/// as the reference the sandbox is compared with. Loaded with `dlopen` (tests do not
/// import the C module) and called through its C API.
final class ReferenceLua {
    private typealias NewState = @convention(c) () -> OpaquePointer?
    private typealias OpenLibs = @convention(c) (OpaquePointer?) -> Void
    private typealias LoadBuffer = @convention(c) (OpaquePointer?, UnsafePointer<CChar>?, Int, UnsafePointer<CChar>?, UnsafePointer<CChar>?) -> Int32
    private typealias PCall = @convention(c) (OpaquePointer?, Int32, Int32, Int32, Int, OpaquePointer?) -> Int32
    private typealias ToLString = @convention(c) (OpaquePointer?, Int32, UnsafeMutablePointer<Int>?) -> UnsafePointer<CChar>?
    private typealias Close = @convention(c) (OpaquePointer?) -> Void

    private let newState: NewState, openLibs: OpenLibs, loadBuffer: LoadBuffer, pcall: PCall, toLString: ToLString, close: Close

    init() throws {
        guard let library = dlopen("liblua5.4.so.0", RTLD_NOW) ?? dlopen("liblua5.4.so", RTLD_NOW) else {
            throw XCTSkip("liblua5.4 cannot be loaded for the reference runs")
        }
        func symbol<T>(_ name: String, _: T.Type) throws -> T {
            guard let pointer = dlsym(library, name) else { throw XCTSkip("liblua5.4 has no \(name)") }
            return unsafeBitCast(pointer, to: T.self)
        }
        newState = try symbol("luaL_newstate", NewState.self)
        openLibs = try symbol("luaL_openlibs", OpenLibs.self)
        loadBuffer = try symbol("luaL_loadbufferx", LoadBuffer.self)
        pcall = try symbol("lua_pcallk", PCall.self)
        toLString = try symbol("lua_tolstring", ToLString.self)
        close = try symbol("lua_close", Close.self)
    }

    /// Runs `source` as the chunk `@name` and returns the string it returns, or its
    /// error message prefixed with "error: ".
    func run(_ source: String, name: String = "recipes/t.lua") -> String {
        guard let state = newState() else { return "error: no state" }
        defer { close(state) }
        openLibs(state)
        let bytes = Array(source.utf8)
        var status = bytes.withUnsafeBufferPointer { buffer in
            buffer.baseAddress!.withMemoryRebound(to: CChar.self, capacity: buffer.count) {
                loadBuffer(state, $0, buffer.count, "@" + name, "t")
            }
        }
        if status == 0 { status = pcall(state, 0, 1, 0, 0, nil) }
        var length = 0
        guard let text = toLString(state, -1, &length) else { return "error: (no message)" }
        let value = text.withMemoryRebound(to: UInt8.self, capacity: length) { String(decoding: UnsafeBufferPointer(start: $0, count: length), as: UTF8.self) }
        return status == 0 ? value : "error: " + value
    }
}
