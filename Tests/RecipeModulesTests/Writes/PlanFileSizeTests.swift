import Foundation
import XCTest
@testable import RecipeModules

/// A plan file is read with a bound: a device that never ends or a file longer than any
/// plan is refused once the bound is passed, instead of filling the memory.
final class PlanFileSizeTests: XCTestCase {
    func testADeviceThatNeverEndsIsRefusedAtTheBound() {
        XCTAssertThrowsError(try Plan.load(from: URL(fileURLWithPath: "/dev/zero"), maxBytes: 1 << 20)) { error in
            XCTAssertEqual("\(error)", "cannot read the plan /dev/zero: it is longer than 1 MiB, more than a plan file can hold; "
                           + "give the file hubscript plan --out wrote")
        }
    }

    func testARegularFileLongerThanTheBoundIsRefusedUnread() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("plan-size-\(UUID().uuidString).json")
        defer { try? FileManager.default.removeItem(at: url) }
        XCTAssertTrue(FileManager.default.createFile(atPath: url.path, contents: nil))
        XCTAssertEqual(truncate(url.path, off_t(Plan.maxFileBytes) * 4), 0)   // sparse: 4 GiB that take no disk
        XCTAssertThrowsError(try Plan.load(from: url)) { error in
            XCTAssertEqual("\(error)", "cannot read the plan \(url.path): it is longer than 1024 MiB, more than a plan file can hold; "
                           + "give the file hubscript plan --out wrote")
        }
    }
}
