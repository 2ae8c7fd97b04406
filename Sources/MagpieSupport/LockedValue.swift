#if canImport(Glibc)
public import Glibc
#elseif canImport(Musl)
public import Musl
#elseif canImport(Darwin)
public import Darwin
#endif

/// A value behind a lock, shareable between tasks: registries, counters and small state
/// machines that are read often and changed rarely.
///
/// The lock is a `pthread_mutex_t` rather than the standard library's `Mutex`: on Linux
/// `Mutex` waits with raw futex calls that Thread Sanitizer cannot see, so every use of it
/// showed up as a data race and drowned the real ones. Uncontended, the two cost the same.
/// Keep the work inside `withLock` short: no I/O and no calls back into user code.
public final class LockedValue<Value: Sendable>: @unchecked Sendable {  // `value` is only touched with `mutex` held
    @usableFromInline let mutex: UnsafeMutablePointer<pthread_mutex_t>
    @usableFromInline var storage: Value

    /// Creates the box holding `value`.
    public init(_ value: Value) {
        storage = value
        mutex = .allocate(capacity: 1)
        mutex.initialize(to: pthread_mutex_t())
        pthread_mutex_init(mutex, nil)
    }

    deinit {
        pthread_mutex_destroy(mutex)
        mutex.deinitialize(count: 1)
        mutex.deallocate()
    }

    /// Runs `body` with exclusive access to the value and returns its result.
    @inlinable
    public func withLock<Result, Failure: Error>(_ body: (inout Value) throws(Failure) -> Result) throws(Failure) -> Result {
        pthread_mutex_lock(mutex)
        defer { pthread_mutex_unlock(mutex) }
        return try body(&storage)
    }

    /// A copy of the value.
    public var value: Value {
        withLock { $0 }
    }
}
