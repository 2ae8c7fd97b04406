public import MagpieSupport

/// A thread-safe, least-recently-used cache in memory, with limits on total cost, count and
/// age (YYMemoryCache, AFAutoPurgingImageCache, NSCache).
///
/// Get and set are O(1) and a hit allocates nothing: entries live in one array linked into
/// a recency list by index, behind one lock.
///
/// ```swift
/// let cache = MemoryCache<String, Image>(configuration: .init(costLimit: 256 << 20))
/// cache.setValue(image, forKey: url, cost: image.cost)
/// if let hit = cache.value(forKey: url) { … }
/// ```
///
/// When the total cost passes ``Configuration/costLimit``, least-recently-used entries are
/// removed until it is at ``Configuration/preferredCostAfterPurge`` (AFAutoPurgingImageCache's
/// "preferred memory usage after purge"), so that purges do not run on every insertion.
///
/// The hot paths are inlinable, so that they are specialised for the caller's key and value
/// types: unspecialised generic code spent most of a lookup finding type metadata.
public final class MemoryCache<Key: Hashable & Sendable, Value: Sendable>: Sendable {
    /// Limits, with defaults derived from the memory the process may use.
    public struct Configuration: Sendable {
        /// The most total cost before a purge. By default 20% of the memory the process may
        /// use: the cgroup limit in a container, physical memory otherwise.
        public var costLimit: Int
        /// Where a purge stops: 80% of ``costLimit`` by default.
        public var preferredCostAfterPurge: Int
        /// The most entries; `Int.max` (no limit) by default.
        public var countLimit: Int
        /// Entries not used for this long are expired; nil (no limit) by default.
        public var ageLimit: Duration?
        /// Values costlier than this are not stored at all; nil (no cap) by default.
        public var entryCostLimit: Int?

        /// A configuration; see each property for its default.
        public init(
            costLimit: Int = MemoryLimits.defaultCacheCostLimit, preferredCostAfterPurge: Int? = nil,
            countLimit: Int = .max, ageLimit: Duration? = nil, entryCostLimit: Int? = nil
        ) {
            self.costLimit = max(0, costLimit)
            self.preferredCostAfterPurge = min(self.costLimit, max(0, preferredCostAfterPurge ?? self.costLimit / 5 * 4))
            self.countLimit = max(0, countLimit)
            self.ageLimit = ageLimit
            self.entryCostLimit = entryCostLimit
        }
    }

    /// Hits, misses and evictions since the cache was made.
    public struct Statistics: Hashable, Sendable {
        public var hits = 0
        public var misses = 0
        public var evictions = 0

        /// Counters with the given values.
        public init(hits: Int = 0, misses: Int = 0, evictions: Int = 0) {
            self.hits = hits
            self.misses = misses
            self.evictions = evictions
        }
    }

    /// An entry's place in the recency list and its bookkeeping: not generic, so the list
    /// operations on a hit touch only plain integers.
    @usableFromInline
    struct Link: Sendable {
        @usableFromInline var previous: Int  // towards the most recent; -1 at the head
        @usableFromInline var next: Int      // towards the least recent; -1 at the tail
        @usableFromInline var cost: Int
        @usableFromInline var lastAccess: Duration

        @inlinable
        init(previous: Int, next: Int, cost: Int, lastAccess: Duration) {
            self.previous = previous
            self.next = next
            self.cost = cost
            self.lastAccess = lastAccess
        }
    }

    @usableFromInline
    struct State: Sendable {
        @usableFromInline var configuration: Configuration
        @usableFromInline var index: [Key: Int] = [:]
        @usableFromInline var links: [Link] = []
        @usableFromInline var entries: [(key: Key, value: Value)?] = []
        @usableFromInline var free: [Int] = []
        @usableFromInline var head = -1  // most recently used
        @usableFromInline var tail = -1  // least recently used
        @usableFromInline var totalCost = 0
        @usableFromInline var statistics = Statistics()

        init(configuration: Configuration) {
            self.configuration = configuration
        }
    }

    @usableFromInline let state: LockedValue<State>
    @usableFromInline let now: @Sendable () -> Duration

    /// A cache with `configuration`, aging entries by the continuous clock.
    public convenience init(configuration: Configuration = .init()) {
        self.init(configuration: configuration, clock: ContinuousClock())
    }

    /// A cache whose ages are measured by `clock` (tests pass a manual one).
    public init<C: Clock>(configuration: Configuration = .init(), clock: C) where C.Duration == Duration {
        state = LockedValue(State(configuration: configuration))
        let start = clock.now
        now = { start.duration(to: clock.now) }
    }

    /// The limits in force.
    public var configuration: Configuration {
        get { state.withLock { $0.configuration } }
        set {
            let time = now()
            state.withLock { state in
                state.configuration = newValue
                Self.enforce(&state, now: time)
            }
        }
    }

    /// The value for `key`, or nil; a hit makes the entry the most recently used.
    @inlinable
    public func value(forKey key: Key) -> Value? {
        state.withLock { state -> Value? in
            guard let i = state.index[key] else {
                state.statistics.misses += 1
                return nil
            }
            // The clock is read only when ages matter: it costs more than the rest of a hit.
            if let age = state.configuration.ageLimit {
                let time = now()
                if time - state.links[i].lastAccess > age {
                    Self.remove(&state, at: i)
                    state.statistics.misses += 1
                    state.statistics.evictions += 1
                    return nil
                }
                state.links[i].lastAccess = time
            }
            Self.moveToHead(&state, i)
            state.statistics.hits += 1
            return state.entries[i]?.value
        }
    }

    /// Whether `key` has an unexpired value (does not count as a use).
    @inlinable
    public func contains(_ key: Key) -> Bool {
        state.withLock { state in
            guard let i = state.index[key] else { return false }
            if let age = state.configuration.ageLimit, now() - state.links[i].lastAccess > age { return false }
            return true
        }
    }

    /// Stores `value` under `key` at `cost` (for images, the bytes of their pixels), then
    /// purges least-recently-used entries if a limit is passed.
    @inlinable
    public func setValue(_ value: Value, forKey key: Key, cost: Int = 0) {
        state.withLock { state in
            let time = state.configuration.ageLimit == nil ? Duration.zero : now()
            if let cap = state.configuration.entryCostLimit, cost > cap {
                if let i = state.index[key] { Self.remove(&state, at: i) }
                return
            }
            if let i = state.index[key] {
                state.totalCost += cost - state.links[i].cost
                state.entries[i] = (key, value)
                state.links[i].cost = cost
                state.links[i].lastAccess = time
                Self.moveToHead(&state, i)
            } else {
                let link = Link(previous: -1, next: state.head, cost: cost, lastAccess: time)
                let i: Int
                if let reused = state.free.popLast() {
                    i = reused
                    state.links[i] = link
                    state.entries[i] = (key, value)
                } else {
                    i = state.links.count
                    state.links.append(link)
                    state.entries.append((key, value))
                }
                if state.head >= 0 { state.links[state.head].previous = i }
                state.head = i
                if state.tail < 0 { state.tail = i }
                state.index[key] = i
                state.totalCost += cost
            }
            Self.enforce(&state, now: time)
        }
    }

    /// Removes the value for `key` and returns it.
    @discardableResult
    public func removeValue(forKey key: Key) -> Value? {
        state.withLock { state in
            guard let i = state.index[key] else { return nil }
            let value = state.entries[i]?.value
            Self.remove(&state, at: i)
            return value
        }
    }

    /// Empties the cache.
    public func removeAll() {
        state.withLock { state in
            state.index.removeAll()
            state.links.removeAll()
            state.entries.removeAll()
            state.free.removeAll()
            state.head = -1
            state.tail = -1
            state.totalCost = 0
        }
    }

    /// Removes least-recently-used entries until the total cost is at most `cost`.
    public func trim(toCost cost: Int) {
        state.withLock { state in
            while state.totalCost > max(0, cost), state.tail >= 0 { Self.evictTail(&state) }
        }
    }

    /// Removes least-recently-used entries until at most `count` remain.
    public func trim(toCount count: Int) {
        state.withLock { state in
            while state.index.count > max(0, count), state.tail >= 0 { Self.evictTail(&state) }
        }
    }

    /// Removes entries not used for longer than `age`.
    public func trim(toAge age: Duration) {
        let time = now()
        state.withLock { state in
            while state.tail >= 0, time - state.links[state.tail].lastAccess > age {
                Self.evictTail(&state)
            }
        }
    }

    /// What the cache does on memory pressure (SDImageCache clears its memory on a warning):
    /// keeps the most recently used entries up to `fraction` of the cost limit (a quarter by
    /// default; 0 empties the cache).
    public func handleMemoryPressure(keeping fraction: Double = 0.25) {
        state.withLock { state in
            let target = Int(Double(state.configuration.costLimit) * max(0, min(1, fraction)))
            while state.totalCost > target, state.tail >= 0 { Self.evictTail(&state) }
        }
    }

    /// The total cost of the entries.
    public var totalCost: Int { state.withLock { $0.totalCost } }
    /// The number of entries.
    public var count: Int { state.withLock { $0.index.count } }
    /// Hits, misses and evictions so far.
    public var statistics: Statistics { state.withLock { $0.statistics } }
    /// The keys from most to least recently used.
    public var keysByRecency: [Key] {
        state.withLock { state in
            var keys: [Key] = []
            var i = state.head
            while i >= 0 {
                if let entry = state.entries[i] { keys.append(entry.key) }
                i = state.links[i].next
            }
            return keys
        }
    }

    // MARK: - The list

    @inlinable
    static func unlink(_ state: inout State, _ i: Int) {
        let link = state.links[i]
        if link.previous >= 0 { state.links[link.previous].next = link.next } else { state.head = link.next }
        if link.next >= 0 { state.links[link.next].previous = link.previous } else { state.tail = link.previous }
    }

    @inlinable
    static func moveToHead(_ state: inout State, _ i: Int) {
        guard state.head != i else { return }
        unlink(&state, i)
        state.links[i].previous = -1
        state.links[i].next = state.head
        if state.head >= 0 { state.links[state.head].previous = i }
        state.head = i
        if state.tail < 0 { state.tail = i }
    }

    @inlinable
    static func remove(_ state: inout State, at i: Int) {
        guard let entry = state.entries[i] else { return }
        unlink(&state, i)
        state.index[entry.key] = nil
        state.totalCost -= state.links[i].cost
        state.entries[i] = nil
        state.free.append(i)
    }

    @inlinable
    static func evictTail(_ state: inout State) {
        remove(&state, at: state.tail)
        state.statistics.evictions += 1
    }

    /// After an insertion: count and age limits, then the cost limit with its purge target.
    @inlinable
    static func enforce(_ state: inout State, now time: Duration) {
        let configuration = state.configuration
        while state.index.count > configuration.countLimit, state.tail >= 0 { evictTail(&state) }
        if let age = configuration.ageLimit {
            while state.tail >= 0, time - state.links[state.tail].lastAccess > age { evictTail(&state) }
        }
        if state.totalCost > configuration.costLimit {
            while state.totalCost > configuration.preferredCostAfterPurge, state.tail >= 0 { evictTail(&state) }
        }
    }
}
