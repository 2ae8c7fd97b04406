import Benchmark
import Foundation
import MagpieCache
import Synchronization

/// The floor for a memory cache: a Dictionary behind a Mutex, no eviction at all.
final class LockedDictionary: Sendable {
    private let storage = Mutex<[Int: Int]>([:])
    func get(_ key: Int) -> Int? { storage.withLock { $0[key] } }
    func set(_ value: Int, _ key: Int) { storage.withLock { $0[key] = value } }
}

/// NSCache is thread-safe but not marked Sendable; this box says so.
final class SharedNSCache: @unchecked Sendable {  // NSCache locks internally
    let cache = NSCache<NSNumber, Box>()
}

/// NSCache needs object keys and values.
final class Box: @unchecked Sendable {  // immutable after init
    let value: Int
    init(_ value: Int) { self.value = value }
}

let keyCount = 10_000
let operationsPerIteration = 100_000
let contendingTasks = 8

let benchmarks: @Sendable () -> Void = {
    let configuration = Benchmark.Configuration(
        metrics: [.wallClock, .throughput, .mallocCountTotal], scalingFactor: .kilo, maxDuration: .seconds(3), maxIterations: 50)

    let memory = MemoryCache<Int, Int>(configuration: .init(costLimit: .max))
    let floor = LockedDictionary()
    let shared = SharedNSCache()
    let nscache = shared.cache
    let boxedKeys = (0..<keyCount).map { NSNumber(value: $0) }
    for key in 0..<keyCount {
        memory.setValue(key, forKey: key, cost: 1)
        floor.set(key, key)
        nscache.setObject(Box(key), forKey: boxedKeys[key])
    }

    // Single task: `scaledIterations` of 1,000 lookups (scalingFactor .kilo).
    Benchmark("Memory get, MemoryCache", configuration: configuration) { benchmark in
        for i in benchmark.scaledIterations { blackHole(memory.value(forKey: i % keyCount)) }
    }
    Benchmark("Memory get, Dictionary + Mutex (floor)", configuration: configuration) { benchmark in
        for i in benchmark.scaledIterations { blackHole(floor.get(i % keyCount)) }
    }
    Benchmark("Memory get, NSCache", configuration: configuration) { benchmark in
        for i in benchmark.scaledIterations { blackHole(nscache.object(forKey: boxedKeys[i % keyCount])) }
    }
    Benchmark("Memory set, MemoryCache", configuration: configuration) { benchmark in
        for i in benchmark.scaledIterations { memory.setValue(i, forKey: i % keyCount, cost: 1) }
    }
    Benchmark("Memory set, Dictionary + Mutex (floor)", configuration: configuration) { benchmark in
        for i in benchmark.scaledIterations { floor.set(i, i % keyCount) }
    }
    Benchmark("Memory set, NSCache", configuration: configuration) { benchmark in
        for i in benchmark.scaledIterations { nscache.setObject(Box(i), forKey: boxedKeys[i % keyCount]) }
    }

    // Contended: 8 tasks sharing the cache; each iteration is 8 x 10,000 lookups.
    let contended = Benchmark.Configuration(metrics: [.wallClock, .throughput], maxDuration: .seconds(3), maxIterations: 30)
    func contendedGets(_ title: String, _ get: @escaping @Sendable (Int) -> Void) {
        Benchmark(title, configuration: contended) { benchmark in
            for _ in benchmark.scaledIterations {
                await withTaskGroup(of: Void.self) { group in
                    for task in 0..<contendingTasks {
                        group.addTask {
                            for i in 0..<10_000 { get((i * 7 + task) % keyCount) }
                        }
                    }
                }
            }
        }
    }
    contendedGets("Memory get x8 tasks, MemoryCache") { blackHole(memory.value(forKey: $0)) }
    contendedGets("Memory get x8 tasks, Dictionary + Mutex (floor)") { blackHole(floor.get($0)) }
    contendedGets("Memory get x8 tasks, NSCache") { blackHole(shared.cache.object(forKey: boxedKeys[$0])) }
}
