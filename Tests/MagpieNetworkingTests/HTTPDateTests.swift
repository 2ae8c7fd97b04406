import Foundation
import MagpieNetworking
import Testing

@Suite("HTTP dates")
struct HTTPDateTests {
    @Test("The IMF-fixdate form and the two obsolete forms name the same instant; anything else is nil")
    func forms() {
        let expected = Date(timeIntervalSince1970: 784_111_777)  // Sun, 06 Nov 1994 08:49:37 GMT
        #expect(HTTPDate.parse("Sun, 06 Nov 1994 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sunday, 06-Nov-94 08:49:37 GMT") == expected)
        #expect(HTTPDate.parse("Sun Nov  6 08:49:37 1994") == expected)
        #expect(HTTPDate.parse("0") == nil)
        #expect(HTTPDate.parse("") == nil)
    }

    @Test("A cookie's Expires attribute is read with it")
    func cookieExpiry() throws {
        let store = CookieStore(now: { Date(timeIntervalSince1970: 0) })
        let url = try #require(URL(string: "http://127.0.0.1/"))
        store.store(["a=1; Expires=Sun, 06 Nov 1994 08:49:37 GMT"], from: url)
        #expect(store.all.first?.expires == Date(timeIntervalSince1970: 784_111_777))
    }
}
