import Foundation
import XCTest

/// The tools the HTTPS tests need: `openssl` (a CA of their own and a server
/// certificate), `python3` (the TLS front) and `tinyproxy` (a real HTTP proxy). Missing
/// tools skip the tests locally; under `CI=true` they fail (scripts/test installs them).
enum TLSTools {
    static func require(_ tools: [String] = ["openssl", "python3", "tinyproxy"]) throws {
        let missing = tools.filter { path(of: $0) == nil }
        guard !missing.isEmpty else { return }
        let message = "needs \(missing.joined(separator: ", ")) (Debian: apt-get install \(missing.joined(separator: " ")))"
        if ProcessInfo.processInfo.environment["CI"] == "true" { XCTFail(message); throw XCTSkip(message) }
        throw XCTSkip(message)
    }

    static func path(of tool: String) -> String? {
        for folder in ["/usr/bin", "/usr/sbin", "/usr/local/bin", "/bin", "/sbin"] {
            let candidate = folder + "/" + tool
            if FileManager.default.isExecutableFile(atPath: candidate) { return candidate }
        }
        return nil
    }

    /// Runs `tool` with `args` in `folder`; throws with its stderr unless it exits 0.
    static func run(_ tool: String, _ args: [String], in folder: URL) throws {
        let p = Process()
        p.executableURL = URL(fileURLWithPath: try XCTUnwrap(path(of: tool)))
        p.arguments = args
        p.currentDirectoryURL = folder
        let err = Pipe()
        p.standardError = err
        p.standardOutput = FileHandle.nullDevice
        try p.run()
        let text = String(decoding: err.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
        p.waitUntilExit()
        guard p.terminationStatus == 0 else { throw TLSFrontError(description: "\(tool) \(args.joined(separator: " ")): \(text)") }
    }
}

struct TLSFrontError: Error, CustomStringConvertible { let description: String }

/// A private CA (`ca.pem`) and a certificate it signed for `localhost` and 127.0.0.1,
/// made with openssl in `folder`.
struct TestCA {
    let folder: URL
    var caFile: String { folder.appendingPathComponent("ca.pem").path }
    var certificate: String { folder.appendingPathComponent("server.pem").path }
    var key: String { folder.appendingPathComponent("server.key").path }

    init(in folder: URL) throws {
        self.folder = folder
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try TLSTools.run("openssl", ["req", "-x509", "-newkey", "rsa:2048", "-nodes", "-keyout", "ca.key", "-out", "ca.pem",
                                     "-days", "2", "-subj", "/CN=hubscript test CA"], in: folder)
        try TLSTools.run("openssl", ["req", "-newkey", "rsa:2048", "-nodes", "-keyout", "server.key", "-out", "server.csr",
                                     "-subj", "/CN=localhost"], in: folder)
        try Data("subjectAltName=DNS:localhost,IP:127.0.0.1\n".utf8).write(to: folder.appendingPathComponent("ext.cnf"))
        try TLSTools.run("openssl", ["x509", "-req", "-in", "server.csr", "-CA", "ca.pem", "-CAkey", "ca.key", "-CAcreateserial",
                                     "-out", "server.pem", "-days", "2", "-extfile", "ext.cnf"], in: folder)
    }
}

/// A TLS front on 127.0.0.1 (python3's ssl module): it accepts TLS with `ca`'s server
/// certificate and relays the bytes to `target` (a plain-HTTP `sandbox serve` port).
final class TLSFront {
    let process = Process()
    let port: Int

    static let script = """
    import socket, ssl, sys, threading
    host, port, cert, key = sys.argv[1], int(sys.argv[2]), sys.argv[3], sys.argv[4]
    context = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    context.load_cert_chain(cert, key)
    listener = socket.socket()
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print(listener.getsockname()[1], flush=True)
    def pump(a, b):
        try:
            while True:
                data = a.recv(65536)
                if not data: break
                b.sendall(data)
        except OSError: pass
        finally:
            for s in (a, b):
                try: s.shutdown(socket.SHUT_RDWR)
                except OSError: pass
    def serve(raw):
        try: tls = context.wrap_socket(raw, server_side=True)
        except (ssl.SSLError, OSError): raw.close(); return
        upstream = socket.create_connection((host, port))
        threading.Thread(target=pump, args=(tls, upstream), daemon=True).start()
        pump(upstream, tls)
    while True:
        connection, _ = listener.accept()
        threading.Thread(target=serve, args=(connection,), daemon=True).start()
    """

    init(ca: TestCA, target port: Int) throws {
        let script = ca.folder.appendingPathComponent("front.py")
        try Data(Self.script.utf8).write(to: script)
        process.executableURL = URL(fileURLWithPath: try XCTUnwrap(TLSTools.path(of: "python3")))
        process.arguments = [script.path, "127.0.0.1", String(port), ca.certificate, ca.key]
        let out = Pipe()
        process.standardOutput = out
        process.standardError = FileHandle.nullDevice
        try process.run()
        var line = Data()
        while !line.contains(0x0A) {
            let chunk = out.fileHandleForReading.availableData
            if chunk.isEmpty { break }
            line.append(chunk)
        }
        guard let port = Int(String(decoding: line, as: UTF8.self).trimmingCharacters(in: .whitespacesAndNewlines)) else {
            process.terminate()
            throw TLSFrontError(description: "the TLS front did not start")
        }
        self.port = port
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }
}

/// tinyproxy on 127.0.0.1 in the foreground, logging each request (CONNECT included) to
/// `log`, so a test can tell what went through it.
final class TinyProxy {
    let process = Process()
    let port: Int
    let log: URL

    init(in folder: URL) throws {
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        port = try Self.freePort()
        log = folder.appendingPathComponent("tinyproxy.log")
        _ = FileManager.default.createFile(atPath: log.path, contents: nil, attributes: [.posixPermissions: 0o666])
        var config = """
        Port \(port)
        Listen 127.0.0.1
        Timeout 60
        LogLevel Connect
        LogFile "\(log.path)"
        MaxClients 20
        Allow 127.0.0.1

        """
        // As root, tinyproxy runs as another user; elsewhere it stays the caller.
        if getuid() == 0 { config += "User nobody\nGroup nogroup\n" }
        let file = folder.appendingPathComponent("tinyproxy.conf")
        try Data(config.utf8).write(to: file)
        // The folder must be reachable by that user to write the log.
        try FileManager.default.setAttributes([.posixPermissions: 0o755], ofItemAtPath: folder.path)
        process.executableURL = URL(fileURLWithPath: try XCTUnwrap(TLSTools.path(of: "tinyproxy")))
        process.arguments = ["-d", "-c", file.path]
        process.standardOutput = FileHandle.nullDevice
        process.standardError = FileHandle.nullDevice
        try process.run()
        let deadline = Date().addingTimeInterval(10)
        while Date() < deadline && !Self.accepts(port) { usleep(20_000) }
        guard Self.accepts(port) else { stop(); throw TLSFrontError(description: "tinyproxy did not start on port \(port)") }
    }

    /// The targets of the CONNECT requests the proxy logged (`localhost:PORT`).
    var connects: [String] {
        let text = (try? String(contentsOf: log, encoding: .utf8)) ?? ""
        return text.split(separator: "\n").compactMap { line -> String? in
            guard line.contains("Request (file descriptor"), let r = line.range(of: ": CONNECT ") else { return nil }
            return String(line[r.upperBound...].prefix { $0 != " " })
        }
    }

    func stop() {
        if process.isRunning { process.terminate() }
        process.waitUntilExit()
    }

    deinit { stop() }

    /// A free loopback port (`HTTPServerProbe`, shared with the listen tests).
    static func freePort() throws -> Int { try HTTPServerProbe().port }

    static func accepts(_ port: Int) -> Bool {
        let fd = socket(AF_INET, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(fd) }
        var address = sockaddr_in()
        address.sin_family = sa_family_t(AF_INET)
        address.sin_addr.s_addr = inet_addr("127.0.0.1")
        address.sin_port = UInt16(port).bigEndian
        return withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { connect(fd, $0, socklen_t(MemoryLayout<sockaddr_in>.size)) == 0 }
        }
    }
}
