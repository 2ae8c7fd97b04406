public import Foundation
import MagpieSupport

/// Cookies kept for one client configuration: in memory, optionally saved to a file. Requests
/// use them only when they ask for cookies.
public final class CookieStore: Sendable {
    /// One cookie.
    public struct Cookie: Codable, Hashable, Sendable {
        public var name: String
        public var value: String
        public var domain: String
        public var path: String
        public var expires: Date?
        public var secure: Bool
        /// Whether the cookie was set with a Domain attribute (then subdomains get it too).
        public var includesSubdomains: Bool
    }

    private let cookies = LockedValue<[Cookie]>([])
    private let file: URL?
    private let now: @Sendable () -> Date

    /// A store in memory, or kept in `file` (loaded now, saved on every change).
    public init(file: URL? = nil, now: @escaping @Sendable () -> Date = { Date() }) {
        self.file = file
        self.now = now
        if let file, let data = try? Data(contentsOf: file), let saved = try? JSONDecoder().decode([Cookie].self, from: data) {
            cookies.withLock { $0 = saved }
        }
    }

    /// Every unexpired cookie.
    public var all: [Cookie] {
        let time = now()
        return cookies.value.filter { $0.expires.map { $0 > time } ?? true }
    }

    /// The `Cookie` header for a request to `url`, or nil.
    public func header(for url: URL) -> String? {
        guard let host = url.host?.lowercased() else { return nil }
        let path = url.path.isEmpty ? "/" : url.path
        let secure = url.scheme?.lowercased() == "https"
        let matching = all.filter { cookie in
            let domainMatches = host == cookie.domain || (cookie.includesSubdomains && host.hasSuffix("." + cookie.domain))
            let pathMatches = path.hasPrefix(cookie.path)
            return domainMatches && pathMatches && (!cookie.secure || secure)
        }
        guard !matching.isEmpty else { return nil }
        return matching.map { "\($0.name)=\($0.value)" }.joined(separator: "; ")
    }

    /// Stores the cookies of `Set-Cookie` header values received from `url`.
    public func store(_ headers: [String], from url: URL) {
        guard !headers.isEmpty, let host = url.host?.lowercased() else { return }
        let time = now()
        let parsed = headers.compactMap { Self.parse($0, host: host, now: time) }
        guard !parsed.isEmpty else { return }
        let snapshot = cookies.withLock { list -> [Cookie] in
            for cookie in parsed {
                list.removeAll { $0.name == cookie.name && $0.domain == cookie.domain && $0.path == cookie.path }
                if cookie.expires.map({ $0 > time }) ?? true { list.append(cookie) }
            }
            return list
        }
        save(snapshot)
    }

    /// Forgets every cookie.
    public func removeAll() {
        cookies.withLock { $0.removeAll() }
        save([])
    }

    private func save(_ list: [Cookie]) {
        guard let file, let data = try? JSONEncoder().encode(list) else { return }
        try? data.write(to: file, options: .atomic)
    }

    static func parse(_ header: String, host: String, now: Date) -> Cookie? {
        let parts = header.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
        guard let first = parts.first, let equals = first.firstIndex(of: "=") else { return nil }
        let name = String(first[..<equals]), value = String(first[first.index(after: equals)...])
        guard !name.isEmpty else { return nil }
        var cookie = Cookie(name: name, value: value, domain: host, path: "/", expires: nil, secure: false, includesSubdomains: false)
        for attribute in parts.dropFirst() {
            let pair = attribute.split(separator: "=", maxSplits: 1).map(String.init)
            let key = pair[0].lowercased(), argument = pair.count > 1 ? pair[1] : ""
            switch key {
            case "domain":
                let domain = argument.lowercased().trimmingCharacters(in: CharacterSet(charactersIn: "."))
                // A server may only set cookies for itself or a parent domain of itself.
                guard host == domain || host.hasSuffix("." + domain) else { return nil }
                cookie.domain = domain
                cookie.includesSubdomains = true
            case "path": if argument.hasPrefix("/") { cookie.path = argument }
            case "max-age": if let seconds = Double(argument) { cookie.expires = now.addingTimeInterval(seconds) }
            case "expires":
                if cookie.expires == nil, let date = HTTPDate.parse(argument) { cookie.expires = date }
            case "secure": cookie.secure = true
            default: break
            }
        }
        return cookie
    }
}
