/// Which `hub` bindings a Hub feature flag gates (docs/hub-api.md, "Client rules"). A gated
/// binding's requests carry the flag, so the Hub answering `501 not_implemented` turns the
/// feature off for the run: the client warns once and sends none of its requests again, and
/// the binding returns its "unavailable" result (an empty list, or nil) instead of an
/// error.
enum HubFeatures {
    /// The flag gating binding `name` (dotted, without `hub.`), or nil.
    static func feature(of name: String) -> String? {
        if name.hasPrefix("webhooks.") { return "webhooks" }
        if name.hasPrefix("organizations.") { return "organizations" }
        if name.hasPrefix("inbox.") { return "notifications" }
        if name == "notifications.send" { return "send_notifications" }
        return nil
    }

    /// The flag gating the binding a call names by its qualified name (`hub.webhooks.test`).
    static func feature(ofFunction qualified: String) -> String? {
        guard qualified.hasPrefix("hub.") else { return nil }
        return feature(of: String(qualified.dropFirst(4)))
    }
}
