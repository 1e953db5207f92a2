import Testing
@testable import RecipeModules
@testable import HubClient

@Suite("Path segments")
struct SegmentTests {
    @Test("a binding's path segment is escaped once, whatever it holds")
    func segmentEscaping() {
        #expect(segment("usr_ada") == "usr_ada")
        #expect(segment("a/b") == "a%2Fb")
        #expect(segment("50%") == "50%25")
        #expect(segment("ada+x@example.com") == "ada%2Bx@example.com")
        #expect(HubRequest(.get, "/users/\(segment("a/b%2F"))").target(prefix: "") == "/users/a%2Fb%252F")
    }
}
