import Foundation
import XCTest
import JSONKit
import ScriptHost
import JournalTestSupport
@testable import RunJournal
@testable import RecipeModules

/// A definite refusal, as the Hub client would throw for a 4xx.
struct FakeRejection: DefiniteWriteFailure, CustomStringConvertible {
    let httpStatus: Int
    var description: String { "validation_failed (\(httpStatus))" }
}

/// An error whose outcome is unknown (connection lost after sending).
struct FakeConnectionLost: Error {}

/// A Hub double for writes: remembers responses per Idempotency-Key and replays them,
/// as the Hub does, and counts how often each key was sent.
final class FakeHub {
    private(set) var sends: [String: Int] = [:]
    private(set) var sendOrder: [String] = []
    private var stored: [String: ScriptValue] = [:]
    /// Called before each send with the 1-based send number; may throw.
    var fault: (Int, String) throws -> Void = { _, _ in }
    /// Commit the change but lose the response on these send numbers.
    var loseResponseOn: Set<Int> = []

    func send(_ intent: WriteIntent) -> (String) throws -> ScriptValue {
        { key in
            self.sendOrder.append(key)
            self.sends[key, default: 0] += 1
            try self.fault(self.sendOrder.count, key)
            let value = self.stored[key] ?? ["path": .string(intent.path), "ok": true]
            self.stored[key] = value
            if self.loseResponseOn.contains(self.sendOrder.count) { throw FakeConnectionLost() }
            return value
        }
    }

    var totalSends: Int { sendOrder.count }
}

extension Fixture {
    static func suspend(_ user: String, reason: String = "offboarded", key: String? = nil) -> WriteIntent {
        WriteIntent(method: "POST", path: "/users/\(user)/suspend", body: CanonicalJSON(["reason": .string(reason)]),
                    explicitKey: key, summary: "suspend \(user)", predicted: ["id": .string(user), "status": "suspended"])
    }

    static func revokeSession(_ user: String, _ session: String) -> WriteIntent {
        WriteIntent(method: "DELETE", path: "/users/\(user)/sessions/\(session)", summary: "revoke \(session)",
                    predicted: .nilValue)
    }
}
/// Asserts that `body` throws a `ScriptLimitError` with exactly `message`.
func XCTAssertLimitError<T>(_ message: String, file: StaticString = #filePath, line: UInt = #line,
                            _ body: () throws -> T) {
    XCTAssertThrowsError(try body(), file: file, line: line) { error in
        guard let limit = error as? ScriptLimitError else {
            return XCTFail("expected ScriptLimitError, got \(error)", file: file, line: line)
        }
        XCTAssertEqual(limit.message, message, file: file, line: line)
    }
}
