public import Foundation
import MagpieSupport

/// Every request in flight, registered with a description so that it can be listed and
/// cancelled by what it is (SJNetworkRequestPool).
public final class RequestPool: Sendable {
    /// What kind of request.
    public enum Kind: String, Sendable, Hashable {
        case request, upload, download
    }

    /// The state of a registered request.
    public enum State: String, Sendable, Hashable {
        /// Waiting for a free slot (downloads beyond the concurrency limit).
        case queued
        /// Sending or receiving.
        case running
        /// A suspended download.
        case suspended
    }

    /// One request in flight.
    public struct Entry: Sendable, CustomStringConvertible {
        public var id: UInt64
        public var kind: Kind
        public var method: HTTPMethod
        public var url: URL
        public var parameters: Parameters
        public var state: State
        /// The response-cache settings, in words ("load cache", "cache 60 s", "no cache").
        public var cacheSettings: String
        /// The stable identifier used in logs and cache keys.
        public var identifier: String

        /// `request https://host/path GET a=1&b=2 [running, no cache]`: the kind, the identifier
        /// (as in logs and cache keys), the state and the cache settings.
        public var description: String {
            "\(kind.rawValue) \(identifier.trimmingCharacters(in: .whitespaces)) [\(state.rawValue), \(cacheSettings)]"
        }
    }

    private struct Registered {
        var entry: Entry
        var cancel: @Sendable () -> Void
    }

    private let entries = LockedValue<[UInt64: Registered]>([:])
    private let nextID = LockedValue<UInt64>(1)

    /// An empty pool.
    public init() {}

    /// Registers a request; `cancel` stops it. Returns its id for ``unregister(_:)``.
    func register(_ make: (UInt64) -> Entry, cancel: @escaping @Sendable () -> Void) -> UInt64 {
        let id = nextID.withLock { value -> UInt64 in
            defer { value += 1 }
            return value
        }
        let entry = make(id)
        entries.withLock { $0[id] = Registered(entry: entry, cancel: cancel) }
        return id
    }

    func unregister(_ id: UInt64) {
        entries.withLock { $0[id] = nil }
    }

    func setState(_ id: UInt64, _ state: State) {
        entries.withLock { $0[id]?.entry.state = state }
    }

    /// Requests in flight.
    public var currentRequestCount: Int { entries.withLock { $0.count } }
    /// Whether any request is in flight.
    public var hasRemainingRequests: Bool { currentRequestCount > 0 }
    /// Every request in flight, oldest first.
    public var requests: [Entry] { entries.withLock { $0.values.map(\.entry) }.sorted { $0.id < $1.id } }

    /// Cancels the requests `matching` selects; returns how many.
    @discardableResult
    public func cancel(where matching: (Entry) -> Bool) -> Int {
        // Cancelled requests leave the pool at once (their tasks unregister later, a no-op), so
        // a second cancel does not count them again.
        let cancels = entries.withLock { registered -> [@Sendable () -> Void] in
            let chosen = registered.filter { matching($0.value.entry) }
            for id in chosen.keys { registered[id] = nil }
            return chosen.values.map(\.cancel)
        }
        for cancel in cancels { cancel() }
        return cancels.count
    }

    /// Cancels requests to `url` with `method` and exactly `parameters`.
    @discardableResult
    public func cancel(url: URL, method: HTTPMethod, parameters: Parameters) -> Int {
        cancel { $0.url.absoluteString == url.absoluteString && $0.method == method && $0.parameters == parameters }
    }

    /// Cancels every request to `url`.
    @discardableResult
    public func cancel(url: URL) -> Int {
        cancel { $0.url.absoluteString == url.absoluteString }
    }

    /// Cancels every request to any of `urls`.
    @discardableResult
    public func cancel(urls: [URL]) -> Int {
        let set = Set(urls.map(\.absoluteString))
        return cancel { set.contains($0.url.absoluteString) }
    }

    /// Cancels every request.
    @discardableResult
    public func cancelAll() -> Int {
        cancel { _ in true }
    }
}
