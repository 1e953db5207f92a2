import SystemText
import XCTest

/// A run's redactor and the process's: what a run registers reaches the process's (so
/// the outputs every run shares mask it), never a sibling run's, and nothing registered
/// in the process's reaches a run's.
final class SecretRedactorScopeTests: XCTestCase {
    func register(_ value: String, _ name: String, in redactor: SecretRedactor) {
        Array(value.utf8).withUnsafeBytes { redactor.register($0, name: name) }
    }

    func testARunsSecretIsMaskedByTheProcessAndNotBySiblingRuns() {
        let process = SecretRedactor()
        let first = SecretRedactor(parent: process), second = SecretRedactor(parent: process)
        register("first-run-token", "a/token", in: first)
        register("second-run-token", "b/token", in: second)
        let text = "first-run-token and second-run-token"
        XCTAssertEqual(process.redact(text), "<secret a/token> and <secret b/token>")
        XCTAssertEqual(first.redact(text), "<secret a/token> and second-run-token")
        XCTAssertEqual(second.redact(text), "first-run-token and <secret b/token>")
        XCTAssertEqual(process.firstSecret(in: "x second-run-token"), "b/token")
        XCTAssertNil(first.firstSecret(in: "x second-run-token"))
    }

    func testSecretsOfTheProcessStayOutOfItsRuns() {
        let process = SecretRedactor()
        let run = SecretRedactor(parent: process)
        register("process-credential", "hub/session", in: process)
        XCTAssertEqual(process.redact("process-credential"), "<secret hub/session>")
        XCTAssertFalse(run.isActive)
        XCTAssertEqual(run.redact("process-credential"), "process-credential")
    }

    func testProcessWideIsTheRootOfTheChain() {
        let process = SecretRedactor()
        let run = SecretRedactor(parent: process)
        let nested = SecretRedactor(parent: run)
        XCTAssertTrue(process.processWide === process)
        XCTAssertTrue(run.processWide === process)
        XCTAssertTrue(nested.processWide === process)
        register("nested-secret", "n/1", in: nested)
        XCTAssertEqual(process.redact("nested-secret"), "<secret n/1>")
        XCTAssertEqual(run.redact("nested-secret"), "<secret n/1>")
    }

    /// Two redactors without a common parent (two processes, or two tests) share nothing.
    func testUnrelatedRedactorsShareNothing() {
        let one = SecretRedactor(), other = SecretRedactor()
        register("only-in-one", "x/1", in: one)
        XCTAssertEqual(other.redact("only-in-one"), "only-in-one")
        XCTAssertFalse(other.isActive)
    }

    /// A value too short to mask is not masked in the parent either.
    func testAValueTooShortIsMaskedNowhere() {
        let process = SecretRedactor()
        let run = SecretRedactor(parent: process)
        register("abc", "short", in: run)
        XCTAssertFalse(process.isActive)
        XCTAssertFalse(run.isActive)
    }
}
