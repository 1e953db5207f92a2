import Foundation
import XCTest
import HubClient
import HTTPKit
@testable import Runs

/// Which Hub errors are the profile's credential or the way to the Hub, the exit code of
/// each, and what people are told to do for each place a credential can come from.
final class HubReachFailureTests: XCTestCase {
    func classify(_ code: String, status: Int? = nil, reason: String? = nil, message: String = "m",
                  origin: CredentialOrigin? = .environment("HUB_KEY")) -> HubReachFailure? {
        HubReachFailure.classify(code: code, status: status, reason: reason, message: message, profile: "prod",
                                 hubURL: "https://hub.example.com", origin: origin)
    }

    func testEachClassAndOnlyThose() {
        XCTAssertEqual(classify("unauthenticated", status: 401)?.kind, .keyRejected)
        XCTAssertEqual(classify("unauthenticated", status: 401, origin: .session(email: "a@b.c"))?.kind, .sessionEnded)
        XCTAssertEqual(classify("session_revoked", status: 401)?.kind, .sessionEnded)
        XCTAssertEqual(classify("refresh_token_reused", status: 401)?.kind, .sessionEnded)
        XCTAssertEqual(classify("session_ended")?.kind, .sessionEnded)
        XCTAssertEqual(classify("transport_error", reason: "untrusted_certificate")?.kind, .tlsUntrusted)
        XCTAssertEqual(classify("transport_error", reason: "wrong_protocol")?.kind, .wrongProtocol)
        XCTAssertEqual(classify("transport_error", reason: "timed_out")?.kind, .timedOut)
        XCTAssertEqual(classify("transport_error", reason: "connection_lost")?.kind, .unreachable)
        XCTAssertEqual(classify("transport_error", reason: "cannot_connect",
                                message: "No response from the Hub: cannot resolve hub.invalid: Name or service not known")?.kind, .nameNotFound)
        XCTAssertEqual(classify("transport_error", reason: "cannot_connect", message: "Could not resolve host: hub.invalid")?.kind, .nameNotFound)
        XCTAssertEqual(classify("transport_error", reason: "cannot_connect",
                                message: "cannot connect to port 1: Connection refused (errno 111)")?.kind, .connectionRefused)
        XCTAssertEqual(classify("transport_error", reason: "cannot_connect", message: "Couldn't connect to server")?.kind, .connectionRefused)
        XCTAssertEqual(classify("transport_error", reason: "cannot_connect", message: "no route to host")?.kind, .unreachable)
        // Not the profile's: the Hub answered, or the recipe asked for something wrong.
        for code in ["forbidden", "not_found", "validation_failed", "rate_limited", "configuration_error", "insecure_transport",
                     "permission_not_declared", "invalid_response"] {
            XCTAssertNil(classify(code, status: 403), code)
        }
        // A 401 code with another status, a transport error with a status: not these.
        XCTAssertNil(classify("unauthenticated", status: 400))
        XCTAssertNil(classify("transport_error", status: 502, reason: "cannot_connect"))
        // Dispatch's transport errors carry no reason: a Dispatch out of reach is not the Hub.
        XCTAssertNil(classify("transport_error", message: "no answer from Dispatch at http://127.0.0.1:9 after 4 attempts"))
    }

    func testExitCodes() {
        XCTAssertEqual(classify("unauthenticated", status: 401)?.exitCode, RunExitCode.capabilityDenied)
        XCTAssertEqual(classify("session_ended")?.exitCode, 3)
        XCTAssertEqual(classify("transport_error", reason: "timed_out")?.exitCode, RunExitCode.hubUnreachable)
        XCTAssertEqual(RunExitCode.hubUnreachable, 7)
        XCTAssertEqual(RunExitCode.of(classify("transport_error", reason: "untrusted_certificate")!), 7)
        XCTAssertEqual(RunExitCode.of(classify("unauthenticated", status: 401)!), 3)
    }

    func testTheRemedyFollowsWhereTheKeyComesFrom() {
        func remedy(_ origin: CredentialOrigin) -> String { classify("unauthenticated", status: 401, origin: origin)!.remedy }
        XCTAssertEqual(remedy(.vaultEntry("hub/prod")), "make a new key and store it: hubscript vault set hub/prod")
        XCTAssertEqual(remedy(.environment("HUB_KEY")),
                       "make a new key and put it in $HUB_KEY (better: hubscript vault set hub/prod, then api_key_ref = \"hub/prod\")")
        XCTAssertEqual(remedy(.configFile("/etc/hs.lua")),
                       "make a new key and store it: hubscript vault set hub/prod, then replace api_key with api_key_ref = \"hub/prod\" in /etc/hs.lua")
        XCTAssertEqual(remedy(.builtinSandbox), "the built-in sandbox's key was revoked in the sandbox; start it afresh: hubscript sandbox reset")
        XCTAssertEqual(classify("session_revoked", status: 401)!.remedy, "sign in again: hubscript login --profile prod")
        let full = classify("unauthenticated", status: 401, message: "The API key is unknown or revoked.", origin: .vaultEntry("hub/prod"))!
        XCTAssertEqual(full.description, "profile 'prod': the API key is unknown, revoked or expired (401 from https://hub.example.com: "
                       + "The API key is unknown or revoked.); make a new key and store it: hubscript vault set hub/prod")
    }

    func testTheCauseIsNotRepeatedOrPrefixed() {
        let tls = classify("transport_error", reason: "untrusted_certificate",
                           message: "https://hub.example.com: its TLS certificate does not verify")!
        XCTAssertEqual(tls.what, "the Hub's TLS certificate is not trusted (https://hub.example.com: its TLS certificate does not verify)")
        let refused = classify("transport_error", reason: "cannot_connect", message: "No response from the Hub: Connection refused")!
        XCTAssertEqual(refused.what, "nothing accepts connections at https://hub.example.com (Connection refused)")
        var proxied = refused
        proxied.proxy = "http://proxy:3128"
        XCTAssertEqual(proxied.what, "nothing accepts connections at https://hub.example.com or at the proxy http://proxy:3128 (Connection refused)")
        XCTAssertTrue(proxied.remedy.hasPrefix("check that the proxy http://proxy:3128 is running"), proxied.remedy)
    }

    func testTheOriginOfEachKindOfProfile() {
        let url = URL(string: "https://hub.example.com")!
        func origin(_ auth: HubProfile.Auth) -> CredentialOrigin {
            CredentialOrigin.of(.hub(HubProfile(name: "p", hubURL: url, auth: auth)), configPath: "/c.lua")
        }
        XCTAssertEqual(origin(.apiKey(.reference("hub/p"))), .vaultEntry("hub/p"))
        XCTAssertEqual(origin(.apiKey(.environment("K"))), .environment("K"))
        XCTAssertEqual(origin(.apiKey(.literal("satk_secret"))), .configFile("/c.lua"))
        XCTAssertEqual(origin(.session(email: "a@b.c")), .session(email: "a@b.c"))
        XCTAssertEqual(CredentialOrigin.of(.sandbox, configPath: nil), .builtinSandbox)
        // The phrase names where, never what.
        XCTAssertFalse(origin(.apiKey(.literal("satk_secret"))).phrase.contains("satk_secret"))
    }

    func testHTTPDateReadsOnlyTheIMFFixdateForm() {
        XCTAssertEqual(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT")?.timeIntervalSince1970, 784111777)
        XCTAssertEqual(HTTPDate.parse("Wed, 02 Dec 2026 10:00:00 GMT")?.timeIntervalSince1970, 1796205600)
        for bad in ["Sunday, 06-Nov-94 08:49:37 GMT", "Sun Nov  6 08:49:37 1994", "Sun, 06 Nov 1994 08:49:37 UTC",
                    "Sun, 31 Feb 1994 08:49:37 GMT", "Sun, 06 Nov 1994 24:00:00 GMT", "Sun, 06 Foo 1994 08:49:37 GMT",
                    "Sun, 6 Nov 1994 8:49:37 GMT", "", "Sun, 06 Nov 1994 08:49 GMT"] {
            XCTAssertNil(HTTPDate.parse(bad), bad)
        }
    }

    func testClockSkew() {
        let hub = Date(timeIntervalSince1970: 1_800_000_000)
        XCTAssertEqual(ClockSkew(hubDate: hub, localDate: hub.addingTimeInterval(0.4)).text, "within 1 s of the Hub's")
        XCTAssertTrue(ClockSkew(hubDate: hub, localDate: hub.addingTimeInterval(-60)).isTolerable)
        let ahead = ClockSkew(hubDate: hub, localDate: hub.addingTimeInterval(300))
        XCTAssertFalse(ahead.isTolerable)
        XCTAssertTrue(ahead.text.hasPrefix("this machine's clock is 300 s ahead of the Hub's; "), ahead.text)
        XCTAssertTrue(ClockSkew(hubDate: hub, localDate: hub.addingTimeInterval(-61)).text.hasPrefix("this machine's clock is 61 s behind"))
    }
}
