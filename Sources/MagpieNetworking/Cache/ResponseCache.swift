public import Foundation
public import MagpieCache
import MagpieSupport

/// Responses kept on disk with an expiry (SJNetworkCacheManager), on a ``DiskCache``.
///
/// Keys are `URL METHOD parameters` separated by single spaces (which a URL and encoded
/// parameters never contain), with the URL already resolved against the base
/// URL and the parameters (defaults included) in sorted order, so that "every response for a
/// URL" and "for a URL and method" are prefix queries on the index. An optional version (the
/// app's) is stored with each entry; an entry of another version counts as absent and is
/// removed when read, as is an expired one.
public final class ResponseCache: Sendable {
    /// What is stored for a response.
    public struct Entry: Sendable {
        public var status: Int
        public var headers: HeaderFields
        public var body: Data
        public var url: URL
        public var storedAt: Date
        public var expiresAt: Date?
    }

    private struct Metadata: Codable {
        var status: Int
        var headers: [[String]]
        var url: String
        var version: String?
        var storedAt: Double
        var expiresAt: Double?
    }

    /// The disk cache underneath.
    public let storage: DiskCache
    /// Entries written under another version are invalid.
    public let version: String?
    /// Where resumable downloads keep their partial data, counted by ``calculateSize()``.
    public let downloadsDirectory: URL?
    private let now: @Sendable () -> Date

    /// A response cache on `storage`.
    public init(storage: DiskCache, version: String? = nil, downloadsDirectory: URL? = nil) {
        self.storage = storage
        self.version = version
        self.downloadsDirectory = downloadsDirectory
        self.now = storage.configuration.now
    }

    static let separator = " "

    /// The key of a request: URL, method and parameters.
    public static func key(url: URL, method: HTTPMethod, parameters: Parameters) -> String {
        url.absoluteString + separator + method.rawValue + separator + ParameterSerialization.query(parameters)
    }

    static func prefix(url: URL, method: HTTPMethod? = nil) -> String {
        url.absoluteString + separator + (method.map { $0.rawValue + separator } ?? "")
    }

    /// Stores a response for `duration` seconds (nothing when duration ≤ 0).
    public func store(_ entry: Entry, forKey key: String, duration: TimeInterval) async throws {
        guard duration > 0 else { return }
        let expires = now().addingTimeInterval(duration)
        let metadata = Metadata(
            status: entry.status, headers: entry.headers.fields.map { [$0.name, $0.value] }, url: entry.url.absoluteString,
            version: version, storedAt: now().timeIntervalSince1970, expiresAt: expires.timeIntervalSince1970)
        try await storage.setData(entry.body, forKey: key, expires: expires, metadata: try JSONEncoder().encode(metadata))
    }

    /// What a lookup found.
    public enum Lookup: Sendable {
        /// A fresh entry.
        case fresh(Entry)
        /// An entry past its expiry; it was removed.
        case expired
        /// An entry written under another version (or unreadable); it was removed.
        case invalid
        /// Nothing.
        case absent
    }

    /// Looks `key` up, removing an expired or other-version entry.
    public func lookup(_ key: String) async throws -> Lookup {
        guard let info = try await storage.entry(forKey: key) else {
            return try await storage.removeIfExpired(key) ? .expired : .absent
        }
        guard let raw = info.metadata, let metadata = try? JSONDecoder().decode(Metadata.self, from: raw),
              metadata.version == version, let url = URL(string: metadata.url) else {
            try await storage.removeValue(forKey: key)
            return .invalid
        }
        guard let body = try await storage.data(forKey: key) else { return .expired }
        return .fresh(Entry(
            status: metadata.status, headers: HeaderFields(metadata.headers.compactMap { $0.count == 2 ? ($0[0], $0[1]) : nil }),
            body: body, url: url, storedAt: Date(timeIntervalSince1970: metadata.storedAt),
            expiresAt: metadata.expiresAt.map { Date(timeIntervalSince1970: $0) }))
    }

    /// The fresh entry for `key`, or nil; an expired or other-version entry is removed.
    public func entry(forKey key: String) async throws -> Entry? {
        if case .fresh(let entry) = try await lookup(key) { return entry }
        return nil
    }

    /// The fresh entry for a request.
    public func entry(url: URL, method: HTTPMethod, parameters: Parameters) async throws -> Entry? {
        try await entry(forKey: Self.key(url: url, method: method, parameters: parameters))
    }

    /// Every fresh entry for `url`, any method and parameters.
    public func entries(url: URL) async throws -> [Entry] {
        try await entries(prefix: Self.prefix(url: url))
    }

    /// Every fresh entry for `url` and `method`.
    public func entries(url: URL, method: HTTPMethod) async throws -> [Entry] {
        try await entries(prefix: Self.prefix(url: url, method: method))
    }

    private func entries(prefix: String) async throws -> [Entry] {
        var found: [Entry] = []
        for key in try await storage.keys(withPrefix: prefix) {
            if let entry = try await entry(forKey: key) { found.append(entry) }
        }
        return found
    }

    /// Removes the entry for a request.
    public func remove(url: URL, method: HTTPMethod, parameters: Parameters) async throws {
        try await storage.removeValue(forKey: Self.key(url: url, method: method, parameters: parameters))
    }

    /// Removes every entry for `url`; returns how many.
    @discardableResult
    public func removeAll(url: URL) async throws -> Int {
        try await storage.removeAll(withPrefix: Self.prefix(url: url))
    }

    /// Removes every entry for `url` and `method`; returns how many.
    @discardableResult
    public func removeAll(url: URL, method: HTTPMethod) async throws -> Int {
        try await storage.removeAll(withPrefix: Self.prefix(url: url, method: method))
    }

    /// Removes every entry.
    public func removeAll() async throws {
        try await storage.removeAll()
    }

    /// The size of the cache, as SJNetwork reports it.
    public struct Size: Sendable, Hashable {
        /// Entries plus files of unfinished downloads.
        public var fileCount: Int
        /// Their bytes.
        public var totalBytes: Int64
        /// `"1.2385 MB"`: base 1024, four decimals, KB below one MB.
        public var description: String { ResponseCache.humanSize(totalBytes) }
    }

    /// Counts the cached responses and the resume data of unfinished downloads.
    public func calculateSize() async throws -> Size {
        var count = try await storage.totalCount
        var bytes = try await storage.totalSize
        if let downloadsDirectory {
            let files = (try? FileManager.default.contentsOfDirectory(at: downloadsDirectory, includingPropertiesForKeys: [.fileSizeKey])) ?? []
            for file in files {
                count += 1
                bytes += Int64((try? file.resourceValues(forKeys: [.fileSizeKey]).fileSize) ?? 0)
            }
        }
        return Size(fileCount: count, totalBytes: bytes)
    }

    /// SJNetwork's form: bytes below 1024, KB below 1024×1024, MB above; four decimals.
    public static func humanSize(_ bytes: Int64) -> String {
        if bytes < 1024 { return "\(bytes) B" }
        if bytes < 1024 * 1024 { return String(format: "%.4f KB", Double(bytes) / 1024) }
        return String(format: "%.4f MB", Double(bytes) / 1024 / 1024)
    }
}
