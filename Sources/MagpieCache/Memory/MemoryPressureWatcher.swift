/// Watches the cgroup's memory use and tells caches to shed weight when it passes a
/// threshold: the server-side counterpart of an iOS memory warning.
///
/// ```swift
/// let watcher = MemoryPressureWatcher { imageCache.handleMemoryPressure() }
/// Task { await watcher.run() }   // until the task is cancelled
/// ```
public struct MemoryPressureWatcher: Sendable {
    /// How often to look. 5 seconds by default.
    public var interval: Duration
    /// The share of the limit above which `onPressure` is called. 0.9 by default.
    public var threshold: Double
    private let usage: @Sendable () -> (used: Int, limit: Int)?
    private let onPressure: @Sendable () -> Void

    /// A watcher of this process's cgroup.
    public init(interval: Duration = .seconds(5), threshold: Double = 0.9, onPressure: @escaping @Sendable () -> Void) {
        self.init(interval: interval, threshold: threshold, usage: { MemoryLimits.cgroupUsage() }, onPressure: onPressure)
    }

    /// A watcher reading `usage` (tests pass their own).
    public init(
        interval: Duration = .seconds(5), threshold: Double = 0.9,
        usage: @escaping @Sendable () -> (used: Int, limit: Int)?, onPressure: @escaping @Sendable () -> Void
    ) {
        self.interval = interval
        self.threshold = threshold
        self.usage = usage
        self.onPressure = onPressure
    }

    /// Checks once: calls `onPressure` and returns true when use is above the threshold.
    @discardableResult
    public func check() -> Bool {
        guard let (used, limit) = usage(), limit > 0, Double(used) / Double(limit) > threshold else { return false }
        onPressure()
        return true
    }

    /// Checks every ``interval`` on `clock` until the task is cancelled.
    public func run<C: Clock>(clock: C) async where C.Duration == Duration {
        while !Task.isCancelled {
            check()
            do {
                try await clock.sleep(for: interval)
            } catch {
                return
            }
        }
    }

    /// Checks every ``interval`` until the task is cancelled.
    public func run() async {
        await run(clock: ContinuousClock())
    }
}
