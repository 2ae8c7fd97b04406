import MagpieSupport

/// Counts requests in flight and tells when the network turns active or idle
/// (AFNetworkActivityIndicatorManager, YYWebImage's indicator) for whatever UI or metric wants it.
///
/// ``changes`` emits `true` when activity starts and `false` when it stops, only for a change
/// of the visible state, after a delay (1/30 s by default) that each change restarts, so a
/// burst of short requests does not flicker.
public final class NetworkActivity: Sendable {
    /// The activity of every networking client that was not given its own.
    public static let shared = NetworkActivity()

    private struct State {
        var count = 0
        var visible = false
        /// When the current delay ends, as time since `init`; moved by every change.
        var deadline = Duration.zero
        /// Whether the one timer task is running.
        var timing = false
        var continuations: [Int: AsyncStream<Bool>.Continuation] = [:]
        var nextID = 0
    }

    private let state = LockedValue(State())
    private let delay: Duration
    private let elapsed: @Sendable () -> Duration
    private let sleepUntil: @Sendable (Duration) async throws -> Void

    /// Activity with `delay` measured by `clock`.
    public init<C: Clock>(delay: Duration = .milliseconds(33), clock: C) where C.Duration == Duration {
        self.delay = delay
        let start = clock.now
        self.elapsed = { start.duration(to: clock.now) }
        self.sleepUntil = { try await clock.sleep(until: start.advanced(by: $0), tolerance: nil) }
    }

    /// Activity with a 1/30 s delay on the continuous clock.
    public convenience init() {
        self.init(clock: ContinuousClock())
    }

    /// Requests in flight now.
    public var count: Int { state.withLock { $0.count } }

    /// The last state emitted.
    public var isActive: Bool { state.withLock { $0.visible } }

    /// One more request in flight.
    public func increment() { change(+1) }

    /// One fewer; never below zero.
    public func decrement() { change(-1) }

    /// Counts the change and restarts the delay. One timer task at most is alive: it sleeps
    /// until the deadline and, if a change moved the deadline meanwhile, sleeps again.
    private func change(_ delta: Int) {
        let now = elapsed()
        let startTimer = state.withLock { state -> Bool in
            state.count = max(0, state.count + delta)
            state.deadline = now + delay
            defer { state.timing = true }
            return !state.timing
        }
        guard startTimer else { return }
        Task { [weak self] in
            await self?.runTimer()
        }
    }

    private func runTimer() async {
        var target = state.withLock { $0.deadline }
        while true {
            try? await sleepUntil(target)
            let outcome = state.withLock { state -> (next: Duration?, emit: (Bool, [AsyncStream<Bool>.Continuation])?) in
                if state.deadline > target { return (state.deadline, nil) }  // restarted meanwhile
                state.timing = false
                let active = state.count > 0
                guard active != state.visible else { return (nil, nil) }
                state.visible = active
                return (nil, (active, Array(state.continuations.values)))
            }
            if let next = outcome.next {
                target = next
                continue
            }
            if let (active, continuations) = outcome.emit {
                for continuation in continuations { continuation.yield(active) }
            }
            return
        }
    }

    /// Active (true) and idle (false) changes from now on.
    public var changes: AsyncStream<Bool> {
        AsyncStream { continuation in
            let id = state.withLock { state -> Int in
                state.nextID += 1
                state.continuations[state.nextID] = continuation
                return state.nextID
            }
            continuation.onTermination = { [weak self] _ in
                self?.state.withLock { _ = $0.continuations.removeValue(forKey: id) }
            }
        }
    }
}
