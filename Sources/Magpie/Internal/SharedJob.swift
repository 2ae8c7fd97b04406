import Foundation
import MagpieImage
import MagpieNetworking
import MagpieSupport

/// What a shared job tells its subscribers.
enum JobEvent<Value: Sendable>: Sendable {
    /// Bytes so far.
    case progress(TransferProgress)
    /// New bytes (only to subscribers that asked for chunks); a subscriber that joins late
    /// first gets everything so far in one chunk.
    case chunk(Data)
    /// A preview image.
    case preview(Image)
    /// The result; nothing follows.
    case value(Value)
    /// The failure; nothing follows.
    case failure(ImagePipelineError)
}

/// One piece of work (a download, a decode, a processing) shared by every subscriber that
/// asks for the same key. It starts with its first subscriber, runs at the highest priority
/// among them, and stops when the last one leaves; subscribers that leave get nothing more.
final class SharedJob<Value: Sendable>: Sendable {
    typealias Handler = @Sendable (JobEvent<Value>) -> Void

    struct Subscriber: Sendable {
        var priority: ImagePriority
        var wantsChunks: Bool
        var handler: Handler
    }

    private struct State: Sendable {
        var subscribers: [Int: Subscriber] = [:]
        var ended = false
        var lastProgress: TransferProgress?
        var received = Data()
        var keepsChunks = false
        var lastPreview: Image?
        var task: Task<Void, Never>?
        var priority = ImagePriority.veryLow
        var onPriority: (@Sendable (ImagePriority) -> Void)?
    }

    let key: String
    private let state = LockedValue(State())
    private let onEnd: @Sendable (SharedJob<Value>) -> Void

    init(key: String, onEnd: @escaping @Sendable (SharedJob<Value>) -> Void) {
        self.key = key
        self.onEnd = onEnd
    }

    /// Adds a subscriber unless the job already ended; catches it up on progress, bytes and
    /// the latest preview.
    func add(_ id: Int, _ subscriber: Subscriber) -> Bool {
        let joined = state.withLock { state -> (JobEvent<Value>?, JobEvent<Value>?, JobEvent<Value>?, (@Sendable (ImagePriority) -> Void)?, ImagePriority)? in
            guard !state.ended else { return nil }
            state.subscribers[id] = subscriber
            if subscriber.wantsChunks { state.keepsChunks = true }
            let changed = Self.updatePriority(&state)
            return (state.lastProgress.map { .progress($0) },
                    subscriber.wantsChunks && !state.received.isEmpty ? .chunk(state.received) : nil,
                    state.lastPreview.map { .preview($0) }, changed ? state.onPriority : nil, state.priority)
        }
        guard let (progress, chunk, preview, observer, priority) = joined else { return false }
        observer?(priority)
        for event in [progress, chunk, preview].compactMap({ $0 }) { subscriber.handler(event) }
        return true
    }

    /// Removes a subscriber; the last one leaving stops the job.
    func remove(_ id: Int) {
        let outcome = state.withLock { state -> (stop: Task<Void, Never>?, ended: Bool, observer: (@Sendable (ImagePriority) -> Void)?, priority: ImagePriority) in
            guard !state.ended, state.subscribers.removeValue(forKey: id) != nil else { return (nil, false, nil, state.priority) }
            if state.subscribers.isEmpty {
                state.ended = true
                return (state.task, true, nil, state.priority)
            }
            let changed = Self.updatePriority(&state)
            return (nil, false, changed ? state.onPriority : nil, state.priority)
        }
        if outcome.ended {
            onEnd(self)
            outcome.stop?.cancel()
        } else {
            outcome.observer?(outcome.priority)
        }
    }

    /// Changes one subscriber's priority.
    func setPriority(_ priority: ImagePriority, for id: Int) {
        let change = state.withLock { state -> ((@Sendable (ImagePriority) -> Void)?, ImagePriority) in
            guard state.subscribers[id] != nil else { return (nil, state.priority) }
            state.subscribers[id]?.priority = priority
            return (Self.updatePriority(&state) ? state.onPriority : nil, state.priority)
        }
        change.0?(change.1)
    }

    private static func updatePriority(_ state: inout State) -> Bool {
        let highest = state.subscribers.values.map(\.priority).max() ?? .veryLow
        defer { state.priority = highest }
        return highest != state.priority
    }

    /// The priority now: the highest of the subscribers'.
    var priority: ImagePriority { state.withLock { $0.priority } }

    /// Called with the new priority whenever it changes (the work passes it upstream).
    func observePriority(_ observer: @escaping @Sendable (ImagePriority) -> Void) {
        state.withLock { $0.onPriority = observer }
    }

    /// Whether the job ended (finished, failed or abandoned by its last subscriber).
    var isEnded: Bool { state.withLock { $0.ended } }

    /// Starts the work.
    func start(_ work: @escaping @Sendable (SharedJob<Value>) async -> Void) {
        let task = Task { await work(self) }
        let abandoned = state.withLock { state -> Bool in
            state.task = task
            return state.ended
        }
        if abandoned { task.cancel() }
    }

    /// Sends a progress, chunk or preview event to the subscribers.
    func send(_ event: JobEvent<Value>) {
        let handlers = state.withLock { state -> [Handler] in
            guard !state.ended else { return [] }
            switch event {
            case .progress(let progress):
                state.lastProgress = progress
            case .chunk(let data):
                if state.keepsChunks { state.received.append(data) }
                return state.subscribers.values.filter(\.wantsChunks).map(\.handler)
            case .preview(let image):
                state.lastPreview = image
            case .value, .failure:
                break
            }
            return state.subscribers.values.map(\.handler)
        }
        for handler in handlers { handler(event) }
    }

    /// Ends the job with its result: every subscriber gets it once.
    func finish(_ result: Result<Value, ImagePipelineError>) {
        let handlers = state.withLock { state -> [Handler]? in
            guard !state.ended else { return nil }
            state.ended = true
            state.received = Data()
            defer { state.subscribers = [:] }
            return state.subscribers.values.map(\.handler)
        }
        guard let handlers else { return }
        onEnd(self)
        let event: JobEvent<Value>
        switch result {
        case .success(let value): event = .value(value)
        case .failure(let error): event = .failure(error)
        }
        for handler in handlers { handler(event) }
    }
}

/// The jobs in progress for one stage, by key.
final class JobRegistry<Value: Sendable>: Sendable {
    private let jobs = LockedValue<[String: SharedJob<Value>]>([:])

    /// Subscribes to the job for `key`, making and starting one when none runs. Returns the job.
    func subscribe(
        key: String, id: Int, _ subscriber: SharedJob<Value>.Subscriber,
        work: @escaping @Sendable (SharedJob<Value>) async -> Void
    ) -> SharedJob<Value> {
        while true {
            let (job, isNew) = jobs.withLock { jobs -> (SharedJob<Value>, Bool) in
                if let existing = jobs[key] { return (existing, false) }
                let made = SharedJob<Value>(key: key) { [weak self] ended in self?.remove(ended) }
                jobs[key] = made
                return (made, true)
            }
            // A job that ended between the lookup and now refuses; remove it and try again.
            guard job.add(id, subscriber) else {
                remove(job)
                continue
            }
            if isNew { job.start(work) }
            return job
        }
    }

    private func remove(_ job: SharedJob<Value>) {
        jobs.withLock { jobs in
            if jobs[job.key] === job { jobs[job.key] = nil }
        }
    }

    /// Jobs running now.
    var count: Int { jobs.withLock { $0.count } }
}
