import Foundation

/// A notification for `POST /v1/notifications` (docs/dispatch.md), checked as the server
/// checks it: the title 1–100 and the body 1–1000 characters, where a character is a
/// Swift `Character` (an extended grapheme cluster: `é` written as `e` + U+0301 is one,
/// a flag emoji is one), exactly what the server's `String.count` counts.
public struct DispatchNotification: Sendable, Equatable {
    public static let titleLength = 1...100
    public static let bodyLength = 1...1000

    public let title: String
    public let body: String

    /// - Throws: `DispatchError` `invalid_title` or `invalid_body` (field `title` or
    ///   `body`), as the server's 400 would.
    public init(title: String, body: String) throws {
        try Self.check(title, "title", Self.titleLength, code: DispatchError.Code.invalidTitle)
        try Self.check(body, "body", Self.bodyLength, code: DispatchError.Code.invalidBody)
        self.title = title
        self.body = body
    }

    private static func check(_ text: String, _ field: String, _ range: ClosedRange<Int>, code: String) throws {
        let count = text.count
        guard range.contains(count) else {
            throw DispatchError(code: code, message: "\(field) must be \(range.lowerBound)–\(range.upperBound) characters (got \(count))",
                                field: field, hint: count == 0 ? "Give it some text." : "Shorten it.")
        }
    }

    /// The request body, `{"body":…,"title":…}` with sorted keys: the same notification
    /// always encodes to the same bytes, which the server's idempotency replay compares.
    public var json: Data { DispatchJSON.encodeNotification(title: title, body: body) }
}

/// What the server answered to an accepted notification (`202`).
public struct DispatchReceipt: Sendable, Equatable {
    /// The server's id for the notification (a UUID).
    public var id: String
    /// Active app installations it was handed to.
    public var acceptedDevices: Int
    /// The server answered from its idempotency record (`Idempotent-Replayed: true`):
    /// this key was accepted before, and nothing was sent again.
    public var replayed: Bool

    public init(id: String, acceptedDevices: Int, replayed: Bool) {
        self.id = id
        self.acceptedDevices = acceptedDevices
        self.replayed = replayed
    }
}
