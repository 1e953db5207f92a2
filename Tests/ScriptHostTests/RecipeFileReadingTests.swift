import Foundation
import XCTest
@testable import ScriptHost

/// How a recipe file is read (open/read to the end, `FileBytes`): a file
/// that never ends must fail clearly, not fill the memory until the process aborts.
final class RecipeFileReadingTests: XCTestCase {
    func testARecipeThatNeverEndsIsRefused() throws {
        XCTAssertThrowsError(try RecipeFile(path: "/dev/zero")) { error in
            XCTAssertEqual((error as? ScriptFailure)?.message,
                           "cannot read /dev/zero: it is longer than 8 MiB; a recipe may be at most 8 MiB")
        }
    }

    /// The cap counts the text as read (a pipe or a device has no size in advance),
    /// and a recipe of exactly the cap still reads.
    func testTheCapIsExact() throws {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("recipe-cap-\(UUID().uuidString).lua")
        defer { try? FileManager.default.removeItem(at: url) }
        var text = Data("print(1)\n".utf8)
        text.append(Data(repeating: UInt8(ascii: "-"), count: RecipeFile.maxBytes - text.count))
        try text.write(to: url)
        XCTAssertEqual(try RecipeFile(path: url.path).source.utf8.count, RecipeFile.maxBytes)
        text.append(UInt8(ascii: "-"))
        try text.write(to: url)
        XCTAssertThrowsError(try RecipeFile(path: url.path)) { error in
            XCTAssertEqual((error as? ScriptFailure)?.message,
                           "cannot read \(url.path): it is longer than 8 MiB; a recipe may be at most 8 MiB")
        }
    }
}
