import Foundation
import XCTest
@testable import HubClient

/// Which CAs HTTPS trusts: a profile's `ca_file`, else `SSL_CERT_FILE`/`SSL_CERT_DIR`,
/// else the system store; a bundle that cannot serve is a configuration error naming
/// the setting (the CLI tests make real TLS connections: PrivateCACLITests).
final class TLSTrustTests: XCTestCase {
    var folder: URL!
    var pem: String!

    override func setUpWithError() throws {
        folder = FileManager.default.temporaryDirectory.appendingPathComponent("tls-trust-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        pem = folder.appendingPathComponent("ca.pem").path
        try Data("-----BEGIN CERTIFICATE-----\nMIIB\n-----END CERTIFICATE-----\n".utf8).write(to: URL(fileURLWithPath: pem))
    }

    override func tearDown() { try? FileManager.default.removeItem(at: folder) }

    func message(_ body: () throws -> TLSTrust) -> String {
        do { return "no error: \(try body())" } catch let error as HubError {
            return error.message + " | " + error.hint
        } catch { return "\(error)" }
    }

    func testOrderProfileThenEnvironmentThenSystem() throws {
        XCTAssertEqual(try TLSTrust.resolve(profile: "p", caFile: nil, environment: [:]), .system)
        XCTAssertTrue(try TLSTrust.resolve(profile: "p", caFile: nil, environment: ["SSL_CERT_FILE": ""]).isSystem)
        XCTAssertEqual(try TLSTrust.resolve(profile: "p", caFile: nil, environment: ["SSL_CERT_FILE": pem]), TLSTrust(caFile: pem))
        XCTAssertEqual(try TLSTrust.resolve(profile: "p", caFile: nil, environment: ["SSL_CERT_DIR": folder.path]),
                       TLSTrust(caDirectory: folder.path))
        XCTAssertEqual(try TLSTrust.resolve(profile: "p", caFile: nil, environment: ["SSL_CERT_FILE": pem, "SSL_CERT_DIR": folder.path]),
                       TLSTrust(caFile: pem, caDirectory: folder.path))
        // Relative paths are relative to the working directory; several folders are separated by ':'.
        let other = folder.appendingPathComponent("more").path
        try FileManager.default.createDirectory(atPath: other, withIntermediateDirectories: true)
        XCTAssertEqual(try TLSTrust.resolve(profile: "p", caFile: nil, environment: ["SSL_CERT_DIR": folder.path + ":" + other]),
                       TLSTrust(caDirectory: folder.path + ":" + other))
        let cwd = FileManager.default.currentDirectoryPath
        XCTAssertTrue(FileManager.default.changeCurrentDirectoryPath(folder.path))
        defer { _ = FileManager.default.changeCurrentDirectoryPath(cwd) }
        XCTAssertEqual(try TLSTrust.resolve(profile: "p", caFile: nil, environment: ["SSL_CERT_FILE": "ca.pem", "SSL_CERT_DIR": "more"]),
                       TLSTrust(caFile: URL(fileURLWithPath: folder.resolvingSymlinksInPath().path).appendingPathComponent("ca.pem").path,
                                caDirectory: URL(fileURLWithPath: folder.resolvingSymlinksInPath().path).appendingPathComponent("more").path))
        // The profile's bundle replaces the environment's.
        XCTAssertEqual(try TLSTrust.resolve(profile: "p", caFile: pem, environment: ["SSL_CERT_FILE": "/nonexistent", "SSL_CERT_DIR": "/x"]),
                       TLSTrust(caFile: pem))
    }

    func testABundleThatCannotServeIsRefusedNamingTheSetting() throws {
        let hint = "Set profiles.prod.ca_file to a PEM file of the CA certificates to trust (-----BEGIN CERTIFICATE----- blocks)."
        XCTAssertEqual(message { try TLSTrust.resolve(profile: "prod", caFile: "/nonexistent/ca.pem", environment: [:]) },
                       "profiles.prod.ca_file /nonexistent/ca.pem: No such file or directory | " + hint)
        XCTAssertEqual(message { try TLSTrust.resolve(profile: "prod", caFile: folder.path, environment: [:]) },
                       "profiles.prod.ca_file \(folder.path) is not a regular file | " + hint)
        XCTAssertEqual(message { try TLSTrust.resolve(profile: "prod", caFile: "ca.pem", environment: [:]) },
                       "profiles.prod.ca_file ca.pem is not an absolute path | " + hint)
        let text = folder.appendingPathComponent("notes.txt").path
        try Data("not a certificate\n".utf8).write(to: URL(fileURLWithPath: text))
        XCTAssertEqual(message { try TLSTrust.resolve(profile: "prod", caFile: text, environment: [:]) },
                       "profiles.prod.ca_file \(text) holds no PEM certificate | " + hint)
        XCTAssertEqual(message { try TLSTrust.resolve(profile: "prod", caFile: nil, environment: ["SSL_CERT_FILE": text]) },
                       "SSL_CERT_FILE \(text) holds no PEM certificate | "
                       + "Set SSL_CERT_FILE to a PEM file of the CA certificates to trust (-----BEGIN CERTIFICATE----- blocks).")
        XCTAssertEqual(message { try TLSTrust.resolve(profile: "prod", caFile: nil, environment: ["SSL_CERT_DIR": pem]) },
                       "SSL_CERT_DIR names \(pem!), which is not a folder | "
                       + "Point SSL_CERT_DIR at a folder of hashed CA certificates (openssl rehash), or unset it.")
        // A FIFO is not read (it would block).
        let fifo = folder.appendingPathComponent("fifo").path
        XCTAssertEqual(mkfifo(fifo, 0o600), 0)
        XCTAssertEqual(message { try TLSTrust.resolve(profile: "prod", caFile: fifo, environment: [:]) },
                       "profiles.prod.ca_file \(fifo) is not a regular file | " + hint)
    }

    /// libcurl's failures as the transport's kinds: a certificate that does not verify is
    /// never retried and says which CAs were trusted.
    func testCurlFailuresMapToTransportKinds() {
        let url = URL(string: "https://hub.example:8443/x")!
        let untrusted = CurlExchange.failure(code: 60, "SSL certificate problem: self-signed certificate", url: url,
                                             trust: TLSTrust(caFile: "/etc/hub-ca.pem"))
        XCTAssertEqual(untrusted, HubTransportError(.untrustedCertificate,
            "https://hub.example:8443: its TLS certificate does not verify against the CAs in /etc/hub-ca.pem "
            + "(SSL certificate problem: self-signed certificate); nothing was sent"))
        XCTAssertEqual(CurlExchange.failure(code: 60, "SSL certificate problem", url: url,
                                            trust: TLSTrust(caFile: "/a.pem", caDirectory: "/certs")).message,
                       "https://hub.example:8443: its TLS certificate does not verify against the CAs in /a.pem and in /certs "
                       + "(SSL certificate problem); nothing was sent")
        // A bundle with the PEM markers whose certificates do not parse.
        XCTAssertEqual(CurlExchange.failure(code: 77, "error setting certificate file: /a.pem", url: url, trust: TLSTrust(caFile: "/a.pem")),
                       HubTransportError(.untrustedCertificate, "https://hub.example:8443: the CAs in /a.pem could not be loaded "
                                         + "(error setting certificate file: /a.pem); check that it holds PEM certificates; nothing was sent"))
        XCTAssertEqual(CurlExchange.failure(code: 7, "Failed to connect", url: url, trust: .system).kind, .cannotConnect)
        XCTAssertEqual(CurlExchange.failure(code: 5, "Could not resolve proxy", url: url, trust: .system).kind, .cannotConnect)
        XCTAssertEqual(CurlExchange.failure(code: 28, "Operation timed out", url: url, trust: .system).kind, .timedOut)
        XCTAssertEqual(CurlExchange.failure(code: 52, "Empty reply", url: url, trust: .system).kind, .connectionLost)
        XCTAssertEqual(CurlExchange.failure(code: 56, "Recv failure", url: url, trust: .system).kind, .connectionLost)
        XCTAssertEqual(CurlExchange.failure(code: 63, "Maximum file size exceeded", url: url, trust: .system).kind, .tooLarge)
        // Anything else in libcurl's words, as URLSession reports it.
        XCTAssertEqual(CurlExchange.failure(code: 35, "OpenSSL/3.0.19: error:0A000410:SSL routines::sslv3 alert handshake failure",
                                            url: url, trust: .system),
                       HubTransportError(.other, "OpenSSL/3.0.19: error:0A000410:SSL routines::sslv3 alert handshake failure"))
    }
}
