import Foundation
import MagpieCache
import MagpieTestSupport
import Synchronization
import Testing

@Suite("Memory cache")
struct MemoryCacheTests {
    @Test("Least recently used entries go first")
    func lru() {
        let cache = MemoryCache<String, Int>(configuration: .init(costLimit: 1000, countLimit: 3))
        cache.setValue(1, forKey: "a")
        cache.setValue(2, forKey: "b")
        cache.setValue(3, forKey: "c")
        #expect(cache.value(forKey: "a") == 1)  // a is now the most recent
        cache.setValue(4, forKey: "d")          // evicts b
        #expect(cache.keysByRecency == ["d", "a", "c"])
        #expect(cache.value(forKey: "b") == nil)
        #expect(cache.statistics == .init(hits: 1, misses: 1, evictions: 1))
    }

    @Test("Passing the cost limit purges to the preferred cost, least recent first")
    func purgeToPreferredCost() {
        let cache = MemoryCache<Int, String>(configuration: .init(costLimit: 100, preferredCostAfterPurge: 50))
        for i in 0..<3 { cache.setValue("\(i)", forKey: i, cost: 30) }  // 90: under the limit
        #expect(cache.count == 3)
        _ = cache.value(forKey: 0)                                      // 0 becomes the most recent
        cache.setValue("3", forKey: 3, cost: 30)                        // 120 > 100: purge to <= 50
        #expect(cache.totalCost <= 50)
        #expect(cache.keysByRecency == [3])
        // Replacing a value updates the cost in place.
        cache.setValue("3'", forKey: 3, cost: 10)
        #expect(cache.totalCost == 10)
        #expect(cache.value(forKey: 3) == "3'")
    }

    @Test("Ages are measured by the injected clock")
    func age() {
        let clock = ManualClock()
        let cache = MemoryCache<String, Int>(configuration: .init(costLimit: 1000, ageLimit: .seconds(10)), clock: clock)
        cache.setValue(1, forKey: "old")
        clock.advance(by: .seconds(6))
        cache.setValue(2, forKey: "new")
        #expect(cache.value(forKey: "old") == 1)  // 6 s: fresh, and now used again
        clock.advance(by: .seconds(6))
        #expect(cache.contains("old"))             // used 6 s ago
        #expect(cache.contains("new"))
        clock.advance(by: .seconds(5))
        #expect(cache.value(forKey: "new") == nil)  // 11 s since set
        #expect(cache.value(forKey: "old") == nil)  // 11 s since last used
        cache.setValue(3, forKey: "a")
        clock.advance(by: .seconds(3))
        cache.setValue(4, forKey: "b")
        cache.trim(toAge: .seconds(2))
        #expect(cache.keysByRecency == ["b"])
    }

    @Test("Trims by cost and count, caps single entries, clears")
    func trims() {
        let cache = MemoryCache<Int, Int>(configuration: .init(costLimit: 10_000, entryCostLimit: 500))
        for i in 0..<10 { cache.setValue(i, forKey: i, cost: 100) }
        cache.setValue(99, forKey: 99, cost: 501)  // above the entry cap: not stored
        #expect(!cache.contains(99))
        cache.trim(toCost: 450)
        #expect(cache.totalCost == 400)
        #expect(cache.keysByRecency == [9, 8, 7, 6])
        cache.trim(toCount: 1)
        #expect(cache.keysByRecency == [9])
        #expect(cache.removeValue(forKey: 9) == 9)
        cache.setValue(1, forKey: 1, cost: 5)
        cache.removeAll()
        #expect(cache.count == 0 && cache.totalCost == 0)
    }

    @Test("Memory pressure keeps a fraction of the limit")
    func memoryPressure() {
        let cache = MemoryCache<Int, Int>(configuration: .init(costLimit: 1000))
        for i in 0..<9 { cache.setValue(i, forKey: i, cost: 100) }
        cache.handleMemoryPressure(keeping: 0.25)
        #expect(cache.totalCost <= 250)
        #expect(cache.keysByRecency == [8, 7])
        cache.handleMemoryPressure(keeping: 0)
        #expect(cache.count == 0)
    }

    @Test("Many tasks at once keep the books straight")
    func concurrent() async {
        let cache = MemoryCache<Int, Int>(configuration: .init(costLimit: 5_000, countLimit: 300))
        await withTaskGroup(of: Void.self) { group in
            for task in 0..<8 {
                group.addTask {
                    var rng = SeededGenerator(seed: UInt64(task))
                    for _ in 0..<5_000 {
                        let key = Int(rng.next() % 500)
                        if rng.next() % 3 == 0 {
                            cache.setValue(key * 7, forKey: key, cost: Int(rng.next() % 40))
                        } else if let value = cache.value(forKey: key) {
                            #expect(value == key * 7)
                        }
                        if rng.next() % 100 == 0 { cache.removeValue(forKey: key) }
                    }
                }
            }
        }
        #expect(cache.count <= 300)
        #expect(cache.totalCost <= 5_000)
        #expect(cache.keysByRecency.count == cache.count)
        let stats = cache.statistics
        #expect(stats.hits + stats.misses > 0)
    }

    @Test("The default cost limit is a fifth of the usable memory")
    func defaultLimit() {
        #expect(MemoryLimits.defaultCacheCostLimit == Int(Double(MemoryLimits.usableMemory()) * 0.2))
        #expect(MemoryCache<Int, Int>().configuration.costLimit == MemoryLimits.defaultCacheCostLimit)
    }
}

@Suite("Memory limits from cgroups")
struct MemoryLimitsTests {
    func root(_ files: [String: String]) throws -> TemporaryDirectory {
        let dir = try TemporaryDirectory("cgroup")
        for (path, contents) in files {
            let url = dir.url.appendingPathComponent(path)
            try FileManager.default.createDirectory(at: url.deletingLastPathComponent(), withIntermediateDirectories: true)
            try contents.write(to: url, atomically: true, encoding: .utf8)
        }
        return dir
    }

    @Test("cgroup v2: memory.max and memory.current of the process's group")
    func v2() throws {
        let dir = try root([
            "proc/self/cgroup": "0::/system.slice/app.service\n",
            "sys/fs/cgroup/system.slice/app.service/memory.max": "536870912\n",
            "sys/fs/cgroup/system.slice/app.service/memory.current": "268435456\n",
        ])
        defer { dir.remove() }
        #expect(MemoryLimits.cgroupLimit(root: dir.url.path) == 536_870_912)
        let usage = try #require(MemoryLimits.cgroupUsage(root: dir.url.path))
        #expect(usage.used == 268_435_456 && usage.limit == 536_870_912)
        #expect(MemoryLimits.usableMemory(root: dir.url.path) == 536_870_912)
    }

    @Test("cgroup v2 without a limit, and v1 with its huge 'unlimited' value, mean no limit")
    func unlimited() throws {
        let v2 = try root(["proc/self/cgroup": "0::/\n", "sys/fs/cgroup/memory.max": "max\n"])
        defer { v2.remove() }
        #expect(MemoryLimits.cgroupLimit(root: v2.url.path) == nil)
        #expect(MemoryLimits.usableMemory(root: v2.url.path) == Int(ProcessInfo.processInfo.physicalMemory))
        let v1 = try root([
            "proc/self/cgroup": "12:memory:/docker/abc\n11:cpu,cpuacct:/docker/abc\n",
            "sys/fs/cgroup/memory/docker/abc/memory.limit_in_bytes": "9223372036854771712\n",
        ])
        defer { v1.remove() }
        #expect(MemoryLimits.cgroupLimit(root: v1.url.path) == nil)
    }

    @Test("cgroup v1 with a limit")
    func v1() throws {
        let dir = try root([
            "proc/self/cgroup": "5:cpuset:/\n4:memory:/kubepods/pod1\n",
            "sys/fs/cgroup/memory/kubepods/pod1/memory.limit_in_bytes": "1073741824\n",
            "sys/fs/cgroup/memory/kubepods/pod1/memory.usage_in_bytes": "1000000000\n",
        ])
        defer { dir.remove() }
        #expect(MemoryLimits.cgroupLimit(root: dir.url.path) == 1_073_741_824)
        #expect(MemoryLimits.cgroupUsage(root: dir.url.path)?.used == 1_000_000_000)
    }

    @Test("The pressure watcher calls back above the threshold, on every interval")
    func watcher() async throws {
        let used = Atomic<Int>(50)
        let calls = Atomic<Int>(0)
        let watcher = MemoryPressureWatcher(
            interval: .seconds(5), threshold: 0.9, usage: { (used.load(ordering: .relaxed), 100) },
            onPressure: { calls.add(1, ordering: .relaxed) })
        #expect(!watcher.check())
        used.store(95, ordering: .relaxed)
        #expect(watcher.check())
        #expect(calls.load(ordering: .relaxed) == 1)

        let clock = ManualClock()
        let task = Task { await watcher.run(clock: clock) }
        // The first check runs at once; each advance of the clock runs another.
        for expected in 2...4 {
            while calls.load(ordering: .relaxed) < expected || clock.sleeperCount == 0 { await Task.yield() }
            clock.advance(by: .seconds(5))
        }
        task.cancel()
        #expect(calls.load(ordering: .relaxed) >= 4)
    }
}
