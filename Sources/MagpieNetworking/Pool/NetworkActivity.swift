import MagpieSupport
import Synchronization

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
        var generation = 0
        var continuations: [Int: AsyncStream<Bool>.Continuation] = [:]
        var nextID = 0
    }

    private let state = Mutex(State())
    private let delay: Duration
    private let sleep: @Sendable (Duration) async throws -> Void

    /// Activity with `delay` measured by `clock`.
    public init<C: Clock>(delay: Duration = .milliseconds(33), clock: C) where C.Duration == Duration {
        self.delay = delay
        self.sleep = { try await clock.sleep(for: $0) }
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

    private func change(_ delta: Int) {
        let generation = state.withLock { state -> Int in
            state.count = max(0, state.count + delta)
            state.generation += 1
            return state.generation
        }
        let sleep = self.sleep, delay = self.delay
        Task { [weak self] in
            try? await sleep(delay)
            self?.settle(generation)
        }
    }

    /// After the delay: if nothing changed since, emit the state if it differs from the last one.
    private func settle(_ generation: Int) {
        let emit = state.withLock { state -> (Bool, [AsyncStream<Bool>.Continuation])? in
            guard state.generation == generation else { return nil }
            let active = state.count > 0
            guard active != state.visible else { return nil }
            state.visible = active
            return (active, Array(state.continuations.values))
        }
        if let (active, continuations) = emit {
            for continuation in continuations { continuation.yield(active) }
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
