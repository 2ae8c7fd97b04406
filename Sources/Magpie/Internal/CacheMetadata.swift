import Foundation
import MagpieNetworking

/// What is stored next to downloaded bytes: validators for revalidation and the freshness
/// the response announced (for ``ImageOptions/useHTTPCache``).
struct CacheMetadata: Codable, Sendable, Equatable {
    var etag: String?
    var lastModified: String?
    /// Seconds since 1970 when the response stops being fresh; nil when it said nothing.
    var freshUntil: Double?
    /// `Cache-Control: no-cache`: always revalidate before use.
    var mustRevalidate: Bool = false
    var contentType: String?

    var hasValidators: Bool { etag != nil || lastModified != nil }

    func encoded() -> Data? { try? JSONEncoder().encode(self) }

    static func decode(_ data: Data?) -> CacheMetadata? {
        data.flatMap { try? JSONDecoder().decode(CacheMetadata.self, from: $0) }
    }

    /// From response headers received at `now`.
    init(headers: HeaderFields, now: Date) {
        etag = headers["ETag"]
        lastModified = headers["Last-Modified"]
        contentType = headers["Content-Type"]
        let policy = HTTPCachePolicy(headers: headers)
        mustRevalidate = policy.noCache
        if let maxAge = policy.maxAge {
            freshUntil = now.timeIntervalSince1970 + Double(maxAge)
        } else if let expires = headers["Expires"].flatMap(HTTPDate.parse) {
            let date = headers["Date"].flatMap(HTTPDate.parse) ?? now
            freshUntil = now.timeIntervalSince1970 + expires.timeIntervalSince(date)
        }
    }

    /// Whether the stored bytes may be used without asking the server.
    func isFresh(at now: Date) -> Bool {
        guard !mustRevalidate, let freshUntil else { return false }
        return now.timeIntervalSince1970 < freshUntil
    }
}

/// The Cache-Control directives that matter to an image cache.
struct HTTPCachePolicy {
    var maxAge: Int?
    var noStore = false
    var noCache = false

    init(headers: HeaderFields) {
        for value in headers.values(for: "Cache-Control") {
            for directive in value.split(separator: ",") {
                let parts = directive.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces).lowercased() }
                switch parts[0] {
                case "no-store": noStore = true
                case "no-cache": noCache = true
                case "s-maxage" where maxAge == nil, "max-age":
                    if parts.count == 2, let seconds = Int(parts[1].trimmingCharacters(in: CharacterSet(charactersIn: "\""))) {
                        maxAge = max(0, seconds)
                    }
                default: break
                }
            }
        }
    }
}
