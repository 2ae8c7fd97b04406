import Synchronization

/// A value behind a lock, shareable between tasks: registries, counters and small state
/// machines that are read often and changed rarely.
///
/// `Mutex` is non-copyable, so it cannot be stored where a class is needed; this box is that
/// class. Keep the work inside `withLock` short: no I/O and no calls back into user code.
public final class LockedValue<Value: Sendable>: Sendable {
    private let mutex: Mutex<Value>

    /// Creates the box holding `value`.
    public init(_ value: Value) {
        mutex = Mutex(value)
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    public func withLock<Result: Sendable, Failure: Error>(
        _ body: (inout sending Value) throws(Failure) -> sending Result
    ) throws(Failure) -> Result {
        try mutex.withLock(body)
    }

    /// A copy of the value.
    public var value: Value {
        mutex.withLock { $0 }
    }
}
