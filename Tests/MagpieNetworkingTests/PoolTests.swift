import Foundation
@testable import MagpieNetworking
import MagpieSupport
import MagpieTestSupport
import Testing

@Suite("Request pool and network activity")
struct PoolTests {
    @Test("1,000 concurrent requests are registered exactly, described, and cancelled four ways")
    func thousandRequests() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                let outcomes = LockedValue<[String: Int]>([:])
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<1000 {
                        // Four groups: a/b/c/d, so each way of cancelling has its own.
                        let path = ["hold/a", "hold/b", "hold/c", "hold/d"][i % 4]
                        group.addTask {
                            do {
                                _ = try await client.get(path, parameters: ["i": .int(i)])
                                outcomes.withLock { $0["ok", default: 0] += 1 }
                            } catch let error as NetworkError {
                                outcomes.withLock { $0[error.kind.description, default: 0] += 1 }
                            }
                        }
                    }
                    #expect(await eventually(30) { client.pool.currentRequestCount == 1000 })
                    #expect(client.pool.hasRemainingRequests)
                    #expect(client.configuration.activity?.count == 1000)
                    let first = try #require(client.pool.requests.first)
                    #expect(first.kind == .request)
                    #expect(first.state == .running)
                    #expect(first.cacheSettings == "no cache")
                    #expect(first.description.hasPrefix("request http://127.0.0.1:\(origin.port)/hold/"))
                    #expect(first.description.contains(" GET i="))
                    #expect(first.description.hasSuffix(" [running, no cache]"))
                    #expect(first.description.contains(first.identifier))

                    let a = origin.url("/hold/a"), b = origin.url("/hold/b"), c = origin.url("/hold/c")
                    #expect(client.pool.cancel(url: a, method: .get, parameters: ["i": 0]) == 1)
                    #expect(client.pool.cancel(url: a) == 249)
                    #expect(client.pool.cancel(urls: [b, c]) == 500)
                    #expect(client.pool.cancelAll() == 250)
                    try await group.waitForAll()
                }
                #expect(outcomes.value == ["cancelled": 1000])
                #expect(client.pool.currentRequestCount == 0)
                #expect(!client.pool.hasRemainingRequests)
                #expect(client.configuration.activity?.count == 0)
            }
        }
    }

    @Test("Registration and removal stay exact when many short requests overlap")
    func shortRequests() async throws {
        try await TestOrigin.with { origin in
            try await withClient(origin) { client in
                let peak = LockedValue(0)
                try await withThrowingTaskGroup(of: Void.self) { group in
                    for i in 0..<120 {
                        group.addTask {
                            _ = try await client.get("echo", parameters: ["i": .int(i)])
                            let now = client.pool.currentRequestCount
                            peak.withLock { $0 = max($0, now) }
                        }
                    }
                    try await group.waitForAll()
                }
                #expect(peak.value > 0)
                #expect(client.pool.currentRequestCount == 0)
                #expect(client.configuration.activity?.count == 0)
            }
        }
    }

    @Test("Activity emits a change only after a quiet delay, never for a blip, never below zero")
    func activityStream() async throws {
        let clock = ManualClock()
        let activity = NetworkActivity(delay: .milliseconds(33), clock: clock)
        let seen = LockedValue<[Bool]>([])
        let listener = Task {
            for await change in activity.changes { seen.withLock { $0.append(change) } }
        }
        try await Task.sleep(for: .milliseconds(20))  // the listener is subscribed

        activity.increment()
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(20))
        try await Task.sleep(for: .milliseconds(30))
        #expect(seen.value.isEmpty)  // not yet: 20 of 33 ms
        clock.advance(by: .milliseconds(13))
        #expect(await eventually { seen.value == [true] })
        #expect(activity.isActive)

        // A request that ends and another that starts within the delay: no idle blip.
        activity.decrement()
        activity.increment()
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(40))
        try await Task.sleep(for: .milliseconds(50))
        #expect(seen.value == [true])

        activity.decrement()
        activity.decrement()  // one too many: stays at zero
        #expect(activity.count == 0)
        #expect(await eventually { clock.sleeperCount == 1 })
        clock.advance(by: .milliseconds(33))
        #expect(await eventually { seen.value == [true, false] })
        #expect(!activity.isActive)

        activity.increment()
        #expect(activity.count == 1)
        listener.cancel()
    }

    @Test("A client's requests move its activity counter")
    func clientCountsActivity() async throws {
        try await TestOrigin.with { origin in
            let activity = NetworkActivity(delay: .milliseconds(1), clock: ContinuousClock())
            try await withClient(origin, configure: { $0.activity = activity }) { client in
                let request = Task { try await client.get("slow/300") }
                #expect(await eventually { activity.count == 1 })
                #expect(await eventually { activity.isActive })
                _ = try await request.value
                #expect(activity.count == 0)
                #expect(await eventually { !activity.isActive })
            }
        }
    }
}
