import Foundation
import XCTest

/// HTTPS to a Hub and a Dispatch whose certificates come from a private CA
/// (docs/operations.md, "TLS and proxies"): a profile trusts a CA bundle of its own
/// (`ca_file`), `SSL_CERT_FILE` / `SSL_CERT_DIR` are honoured, and `HTTPS_PROXY` /
/// `NO_PROXY` route through a real HTTP proxy (tinyproxy). The sandbox is served over
/// plain HTTP behind a TLS front with its own CA.
final class PrivateCACLITests: XCTestCase {
    var cli: CLIHarness!
    var served: ServedSandbox!
    var ca: TestCA!
    var hubFront: TLSFront!
    var dispatchFront: TLSFront!
    var config: String!
    /// No trust or proxy from the machine running the tests: each test sets its own.
    static let clean = ["SSL_CERT_FILE": "", "SSL_CERT_DIR": "", "HTTPS_PROXY": "", "https_proxy": "", "ALL_PROXY": "",
                        "all_proxy": "", "HTTP_PROXY": "", "http_proxy": "", "NO_PROXY": "", "no_proxy": "",
                        "DISPATCH_TOKEN": "dsp_test_machine_sandbox"]

    override func setUpWithError() throws {
        try TLSTools.require()
        cli = try CLIHarness(testCase: self)
        cli.extraEnvironment = Self.clean
        let hubState = cli.root.appendingPathComponent("hub-state")
        try cli.resetSandbox(state: hubState)
        served = try ServedSandbox(cli, state: hubState, faults: "none")
        ca = try TestCA(in: cli.root.appendingPathComponent("ca"))
        hubFront = try TLSFront(ca: ca, target: try XCTUnwrap(Int(served.url.split(separator: ":").last ?? "")))
        dispatchFront = try TLSFront(ca: ca, target: try XCTUnwrap(Int(served.dispatchURL.split(separator: ":").last ?? "")))
        let common = """
            hub_url = "https://localhost:\(hubFront.port)", api_key = "satk_test_jobs_sandbox_0000000000000000",
            api_key_permissions = { "users.list" }, rate_limit_per_minute = 0,
            dispatch_url = "https://localhost:\(dispatchFront.port)", dispatch_token_ref = "env:DISPATCH_TOKEN"
            """
        config = try cli.file("tls.config.lua", """
            return { profiles = {
              private = { \(common), ca_file = "ca/ca.pem" },
              system = { \(common) },
              missing = { \(common), ca_file = "/nonexistent/ca.pem" },
            } }
            """)
        try cli.file("ada.lua", """
            recipe { name = "ada", needs = { "users.list" } }
            print(hub.users.get("usr_ada").email)
            """)
    }

    override func tearDown() {
        hubFront?.stop()
        dispatchFront?.stop()
        served?.stop()
    }

    func run(_ profile: String, _ extra: [String: String] = [:]) throws -> CLIHarness.Result {
        cli.extraEnvironment = Self.clean.merging(extra) { $1 }
        defer { cli.extraEnvironment = Self.clean }
        return try cli.run(["run", "ada.lua", "--config", config, "--profile", profile, "--quiet"], cwd: cli.root)
    }

    /// A Hub whose certificate does not verify reads as the profile's TLS problem, with
    /// no recipe traceback: exit code 7.
    func untrusted(_ trusted: String, profile: String = "system") -> String {
        "error: profile '\(profile)': the Hub's TLS certificate is not trusted (https://localhost:\(hubFront.port): its TLS certificate "
            + "does not verify against \(trusted) (SSL certificate problem: unable to get local issuer certificate); nothing was sent); "
            + "if the Hub uses a private CA, set ca_file = \"/path/to/ca.pem\" in profile '\(profile)' "
            + "(docs/operations.md, \"TLS: private CAs and proxies\")\n"
    }

    func testAProfilesCAFileIsTrustedForItsHubAndItsDispatch() throws {
        let r = try run("private")
        XCTAssertEqual(r.stdout, "ada@example.com\n", r.stderr)
        XCTAssertEqual(r.status, 0)
        let sent = try cli.run(["dispatch", "test", "--title", "private CA", "--config", config, "--profile", "private"], cwd: cli.root)
        XCTAssertEqual(sent.status, 0, sent.output)
        XCTAssertTrue(sent.stdout.hasPrefix("Sent \"private CA\" through https://localhost:\(dispatchFront.port)"), sent.stdout)
    }

    func testWithoutTheCAThePrivateHubIsRefusedOnceSayingWhatToTrust() throws {
        // The system store (URLSession): refused, not retried.
        let r = try cli.run(["run", "ada.lua", "--config", config, "--profile", "system", "--verbose"], cwd: cli.root)
        XCTAssertEqual(r.status, 7)
        XCTAssertTrue(r.stderr.contains("error: profile 'system': the Hub's TLS certificate is not trusted (https://localhost:\(hubFront.port): "
                                        + "its TLS certificate does not verify against the system's CAs "
                                        + "(SSL certificate problem: unable to get local issuer certificate); nothing was sent); "
                                        + "if the Hub uses a private CA, set ca_file"), r.stderr)
        XCTAssertFalse(r.stderr.contains("stack traceback"), r.stderr)
        XCTAssertEqual(r.stderr.components(separatedBy: "hub: GET /users/usr_ada failed").count - 1, 1, "retried: \(r.stderr)")
        // Another CA bundle: refused, naming it.
        let other = try TestCA(in: cli.root.appendingPathComponent("other-ca"))
        let wrong = try run("system", ["SSL_CERT_FILE": other.caFile])
        XCTAssertTrue(wrong.stderr.hasPrefix(untrusted("the CAs in \(other.caFile)")), wrong.stderr)
        XCTAssertEqual(wrong.status, 7)
    }

    func testWhoamiAndDoctorSayWhichCAsTheHubIsTrustedWith() throws {
        let who = try cli.run(["whoami", "--config", config, "--profile", "private"], cwd: cli.root)
        XCTAssertTrue(who.stdout.hasPrefix("profile     private\nhub         https://localhost:\(hubFront.port) (API version 1)\n"), who.output)
        XCTAssertEqual(who.status, 0)
        let doctor = try cli.run(["doctor", "--config", config, "--profile", "private"], cwd: cli.root)
        XCTAssertTrue(doctor.stdout.contains("ok    hub 'private': https://localhost:\(hubFront.port) answered over TLS, trusting ca_file "
                                             + "\(ca.caFile), in "), doctor.stdout)
        XCTAssertTrue(doctor.stdout.contains("ok    dispatch 'private': https://localhost:\(dispatchFront.port) accepts connections over TLS; "
                                             + "token from the environment variable $DISPATCH_TOKEN (dispatch_token_ref)\n"), doctor.stdout)
        XCTAssertEqual(doctor.status, 0, doctor.stdout)
        // Without the CA: the Hub's certificate is not trusted, and both say so.
        let untrustedWho = try cli.run(["whoami", "--config", config, "--profile", "system"], cwd: cli.root)
        XCTAssertTrue(untrustedWho.stderr.hasPrefix("hubscript whoami: profile 'system': the Hub's TLS certificate is not trusted ("),
                      untrustedWho.stderr)
        XCTAssertEqual(untrustedWho.status, 7)
        let untrusted = try cli.run(["doctor", "--config", config, "--profile", "system"], cwd: cli.root)
        XCTAssertTrue(untrusted.stdout.contains("FAIL  hub 'system': the Hub's TLS certificate is not trusted (https://localhost:\(hubFront.port): "
                                                + "its TLS certificate does not verify against the system's CAs"), untrusted.stdout)
        XCTAssertTrue(untrusted.stdout.contains("if the Hub uses a private CA, set ca_file = \"/path/to/ca.pem\" in profile 'system'"),
                      untrusted.stdout)
        XCTAssertEqual(untrusted.status, 1)
    }

    func testSSLCertFileAndSSLCertDirAreHonoured() throws {
        var r = try run("system", ["SSL_CERT_FILE": ca.caFile])
        XCTAssertEqual(r.stdout, "ada@example.com\n", r.stderr)
        XCTAssertEqual(r.status, 0)
        // A folder of hashed certificates (openssl rehash).
        let folder = cli.root.appendingPathComponent("certs")
        try FileManager.default.createDirectory(at: folder, withIntermediateDirectories: true)
        try FileManager.default.copyItem(atPath: ca.caFile, toPath: folder.appendingPathComponent("test-ca.pem").path)
        try TLSTools.run("openssl", ["rehash", folder.path], in: cli.root)
        r = try run("system", ["SSL_CERT_DIR": folder.path])
        XCTAssertEqual(r.stdout, "ada@example.com\n", r.stderr)
        // The profile's ca_file wins over the environment's.
        let other = try TestCA(in: cli.root.appendingPathComponent("other-ca"))
        r = try run("private", ["SSL_CERT_FILE": other.caFile])
        XCTAssertEqual(r.stdout, "ada@example.com\n", r.stderr)
    }

    func testABundleThatCannotServeStopsOnlyItsProfileSayingWhy() throws {
        var r = try run("missing")
        XCTAssertEqual(r.stdout, "")
        XCTAssertEqual(r.status, 2)
        XCTAssertTrue(r.stderr.contains("error: configuration_error: profiles.missing.ca_file /nonexistent/ca.pem: No such file or directory. "
                                        + "Set profiles.missing.ca_file to a PEM file of the CA certificates to trust "
                                        + "(-----BEGIN CERTIFICATE----- blocks).\n"), r.stderr)
        r = try run("system", ["SSL_CERT_FILE": cli.root.appendingPathComponent("ada.lua").path])
        XCTAssertTrue(r.stderr.contains("SSL_CERT_FILE \(cli.root.appendingPathComponent("ada.lua").path) holds no PEM certificate"), r.stderr)
        XCTAssertEqual(r.status, 2)
        r = try run("system", ["SSL_CERT_DIR": ca.caFile])
        XCTAssertTrue(r.stderr.contains("SSL_CERT_DIR names \(ca.caFile), which is not a folder"), r.stderr)
        XCTAssertEqual(r.status, 2)
        // The other profiles are not affected.
        XCTAssertEqual(try run("private").status, 0)
    }

    func testHTTPSProxyAndNoProxyRouteThroughARealProxy() throws {
        let proxy = try TinyProxy(in: cli.root.appendingPathComponent("proxy"))
        defer { proxy.stop() }
        let proxyURL = "http://127.0.0.1:\(proxy.port)"
        // Through the proxy, with the profile's CA (libcurl) and with the system store's
        // path (URLSession) and SSL_CERT_FILE.
        for variable in ["HTTPS_PROXY", "https_proxy"] {
            let r = try run("private", [variable: proxyURL])
            XCTAssertEqual(r.stdout, "ada@example.com\n", "\(variable): \(r.stderr)")
        }
        XCTAssertEqual(try run("system", ["HTTPS_PROXY": proxyURL, "SSL_CERT_FILE": ca.caFile]).stdout, "ada@example.com\n")
        XCTAssertEqual(proxy.connects, Array(repeating: "localhost:\(hubFront.port)", count: 3))
        // NO_PROXY / no_proxy: straight to the Hub.
        for variable in ["NO_PROXY", "no_proxy"] {
            let r = try run("private", ["HTTPS_PROXY": proxyURL, variable: "localhost"])
            XCTAssertEqual(r.stdout, "ada@example.com\n", "\(variable): \(r.stderr)")
        }
        XCTAssertEqual(proxy.connects.count, 3)
        // A proxy that is down: no response, saying so.
        proxy.stop()
        let down = try run("private", ["HTTPS_PROXY": proxyURL])
        XCTAssertEqual(down.status, 7)
        XCTAssertTrue(down.stderr.hasPrefix("error: profile 'private': nothing accepts connections at https://localhost:\(hubFront.port) "
                                            + "or at the proxy \(proxyURL) ("), down.stderr)
        XCTAssertTrue(down.stderr.contains("); check that the proxy \(proxyURL) is running (or set NO_PROXY for this host), "
                                            + "then the Hub and the port of hub_url in profile 'private'\n"), down.stderr)
    }
}
