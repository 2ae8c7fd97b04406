public import Foundation
import MagpieSupport

/// How a download should go. The defaults are written next to each property.
public struct DownloadOptions: Sendable {
    /// Keep partial bytes on failure, suspend or cancel, and continue from them next time.
    /// `true` by default; `false` deletes partial data whenever the download does not finish.
    public var resumable = true
    /// Use the path as it is, without the client's base URL. `false` by default.
    public var ignoresBaseURL = false
    /// Header fields added to (or replacing) the client's.
    public var headers: HeaderFields = [:]
    /// Automatic retries after a dropped connection, a timeout or a 502/503/504, each
    /// continuing from the bytes already stored. 3 by default.
    public var maxRetries = 3
    /// The wait before the first retry, doubled for each further one. 250 ms by default.
    public var retryDelay: Duration = .milliseconds(250)
    /// The longest one attempt may take, from request to last byte. One hour by default.
    public var timeout: Duration = .seconds(3600)
    /// Accept any TLS certificate for this download only. `false` by default.
    public var allowsInvalidCertificates = false
    /// Called as bytes arrive, with the totals of the whole file (resumed bytes included).
    public var onProgress: (@Sendable (TransferProgress) -> Void)?

    /// The default options.
    public init() {}
}

/// The state of a ``DownloadTask``.
public enum DownloadState: String, Sendable, Hashable, CustomStringConvertible {
    /// Waiting for a free slot.
    case queued
    /// Transferring.
    case running
    /// Stopped by ``DownloadTask/suspend()``; the partial data is kept.
    case suspended
    /// The file is complete at its destination.
    case completed
    /// Failed or cancelled; see ``DownloadTask/error``.
    case failed

    public var description: String { rawValue }
}

/// What a finished download did.
public struct DownloadResult: Sendable {
    /// The complete file.
    public var file: URL
    /// Its size.
    public var bytes: Int64
    /// Bytes already on disk when the last attempt started (0 when it started from zero).
    public var resumedFrom: Int64
    /// Attempts made by the last run, retries included.
    public var attempts: Int
    /// Times the server sent the whole file instead of the range asked for (it had changed),
    /// so the download started again from zero.
    public var restarts: Int
}

/// One download: its state, progress and result, with suspend, resume and cancel.
public final class DownloadTask: Sendable, CustomStringConvertible {
    /// The URL it downloads.
    public let url: URL
    /// Where the complete file goes.
    public let destination: URL
    /// Its options.
    public let options: DownloadOptions
    let files: ResumeFiles

    struct State {
        var phase: DownloadState = .queued
        var progress = TransferProgress(completed: 0, expected: -1)
        var run = 0
        var runner: Task<Void, Never>?
        var result: Result<DownloadResult, NetworkError>?
        var waiters: [CheckedContinuation<DownloadResult, any Error>] = []
        var poolID: UInt64?
    }

    let state = LockedValue(State())
    private let manager: DownloadManager

    init(url: URL, destination: URL, options: DownloadOptions, files: ResumeFiles, manager: DownloadManager) {
        self.url = url
        self.destination = destination
        self.options = options
        self.files = files
        self.manager = manager
    }

    /// The state now.
    public var phase: DownloadState { state.withLock { $0.phase } }

    /// Bytes stored so far (including those of earlier runs) and the total, -1 when unknown.
    public var progress: TransferProgress { state.withLock { $0.progress } }

    /// The failure, once ``phase`` is ``DownloadState/failed``.
    public var error: NetworkError? {
        state.withLock { state -> NetworkError? in
            if case .failure(let error) = state.result { return error }
            return nil
        }
    }

    /// The partial file the download continues from.
    public var resumeData: URL { files.partial }

    /// Waits until the download completes (returning the result) or fails or is cancelled
    /// (throwing a ``NetworkError``). Waiting does not survive a suspend: it goes on waiting
    /// until the download is resumed and ends.
    public func result() async throws -> DownloadResult {
        try await withCheckedThrowingContinuation { continuation in
            let done = state.withLock { state -> Result<DownloadResult, NetworkError>? in
                if let result = state.result { return result }
                state.waiters.append(continuation)
                return nil
            }
            if let done { continuation.resume(with: done) }
        }
    }

    /// Stops the transfer, keeping the partial data; ``resume()`` continues it.
    public func suspend() {
        manager.suspend(self)
    }

    /// Continues a suspended download from its partial data.
    public func resume() {
        manager.resume(self)
    }

    /// Stops the download for good: waiters get ``NetworkError/Kind/cancelled``. The partial
    /// data of a resumable download is kept (a later download of the same URL to the same
    /// destination continues from it) unless `discardingPartialData`.
    public func cancel(discardingPartialData: Bool = false) {
        manager.cancel(self, discarding: discardingPartialData)
    }

    public var description: String {
        "download \(url.absoluteString) → \(destination.path) [\(phase)]"
    }
}
