import Dispatch
import Foundation
import MagpieSupport

/// Which queued download starts first among equal priorities.
public enum ExecutionOrder: String, Sendable, Hashable {
    /// First in, first out (the default).
    case fifo
    /// Last in, first out: the newest request first (a scrolled-to cell before those scrolled past).
    case lifo
}

/// Slots for downloads: at most `limit` at once (0: no limit), the rest waiting by priority,
/// then by order. Priorities of waiting entries can change; the limit can change while running.
final class DownloadSlots: Sendable {
    private struct Waiter {
        var priority: ImagePriority
        var sequence: Int
        var continuation: CheckedContinuation<Void, any Error>
    }

    private struct State {
        var limit: Int
        var running = 0
        var waiting: [Int: Waiter] = [:]
        var sequence = 0
        var order: ExecutionOrder
    }

    private let state: LockedValue<State>

    init(limit: Int, order: ExecutionOrder) {
        state = LockedValue(State(limit: limit, order: order))
    }

    /// Downloads holding a slot.
    var running: Int { state.withLock { $0.running } }
    /// Downloads waiting for one.
    var waiting: Int { state.withLock { $0.waiting.count } }

    var limit: Int {
        get { state.withLock { $0.limit } }
        set {
            let resumed = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
                state.limit = max(0, newValue)
                return Self.admit(&state)
            }
            for continuation in resumed { continuation.resume() }
        }
    }

    /// Waits for a slot; `token` names the wait for ``setPriority(_:for:)``. Throws
    /// `CancellationError` when the task is cancelled while waiting.
    func acquire(token: Int, priority: ImagePriority) async throws {
        try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<Void, any Error>) in
                let resumed = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
                    state.sequence += 1
                    state.waiting[token] = Waiter(priority: priority, sequence: state.sequence, continuation: continuation)
                    return Self.admit(&state)
                }
                for continuation in resumed { continuation.resume() }
            }
        } onCancel: {
            let cancelled = state.withLock { state in state.waiting.removeValue(forKey: token)?.continuation }
            cancelled?.resume(throwing: CancellationError())
        }
    }

    /// Gives a slot back.
    func release() {
        let resumed = state.withLock { state -> [CheckedContinuation<Void, any Error>] in
            state.running = max(0, state.running - 1)
            return Self.admit(&state)
        }
        for continuation in resumed { continuation.resume() }
    }

    /// Changes the priority of a waiting download (a running one is unaffected).
    func setPriority(_ priority: ImagePriority, for token: Int) {
        state.withLock { $0.waiting[token]?.priority = priority }
    }

    /// Starts waiters while slots are free: highest priority first, then by order.
    private static func admit(_ state: inout State) -> [CheckedContinuation<Void, any Error>] {
        var resumed: [CheckedContinuation<Void, any Error>] = []
        while !state.waiting.isEmpty && (state.limit == 0 || state.running < state.limit) {
            let lifo = state.order == .lifo
            guard let next = state.waiting.max(by: { a, b in
                if a.value.priority != b.value.priority { return a.value.priority < b.value.priority }
                return lifo ? a.value.sequence < b.value.sequence : a.value.sequence > b.value.sequence
            }) else { break }
            state.waiting[next.key] = nil
            state.running += 1
            resumed.append(next.value.continuation)
        }
        return resumed
    }
}

/// CPU work (decoding, processing, encoding) on threads outside the Swift concurrency pool,
/// at most `width` at once (the rest wait their turn in order), so that coordination and I/O
/// keep their threads and no more threads are used than there are cores.
final class WorkQueue: Sendable {
    private struct State {
        var active = 0
        var pending: [@Sendable () -> Void] = []
    }

    private let width: Int
    private let state = LockedValue(State())

    init(width: Int) {
        self.width = max(1, width)
    }

    /// Runs `work` on a global queue thread and returns its result. Cancelled before it
    /// starts, it throws `CancellationError` without running.
    func run<T: Sendable>(_ work: @escaping @Sendable () throws -> T) async throws -> T {
        try Task.checkCancellation()
        let cancelled = LockedValue(false)
        return try await withTaskCancellationHandler {
            try await withCheckedThrowingContinuation { (continuation: CheckedContinuation<T, any Error>) in
                let item: @Sendable () -> Void = {
                    if cancelled.value {
                        continuation.resume(throwing: CancellationError())
                    } else {
                        continuation.resume(with: Result { try work() })
                    }
                    self.next()
                }
                let startNow = state.withLock { state -> Bool in
                    guard state.active < width else {
                        state.pending.append(item)
                        return false
                    }
                    state.active += 1
                    return true
                }
                if startNow { DispatchQueue.global(qos: .userInitiated).async(execute: item) }
            }
        } onCancel: {
            cancelled.withLock { $0 = true }
        }
    }

    /// One item ended: start the next waiting one, or free the slot.
    private func next() {
        let item = state.withLock { state -> (@Sendable () -> Void)? in
            guard !state.pending.isEmpty else {
                state.active -= 1
                return nil
            }
            return state.pending.removeFirst()
        }
        if let item { DispatchQueue.global(qos: .userInitiated).async(execute: item) }
    }

    /// Work items running now.
    var running: Int { state.withLock { $0.active } }
}
