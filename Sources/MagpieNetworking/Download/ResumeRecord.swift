public import Foundation
import MagpieSupport

#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// Where a download keeps its partial bytes and what it knows about them.
///
/// The record is written before the first byte is appended, so a process killed at any moment
/// leaves a partial file whose bytes are all valid and a record that says where they came from.
/// The partial file's length is the truth about what was received (the record's count may lag).
struct ResumeRecord: Codable, Equatable, Sendable {
    var url: String
    var destination: String
    /// -1 when the server did not say.
    var totalLength: Int64
    var etag: String?
    var lastModified: String?
    var receivedLength: Int64
    var updatedAt: Double

    /// The validator to send in `If-Range`: a strong ETag, else Last-Modified. Weak ETags
    /// cannot be used for ranges.
    var rangeValidator: String? {
        if let etag, !etag.hasPrefix("W/") { return etag }
        return lastModified
    }
}

/// The two side files of one download.
struct ResumeFiles: Sendable {
    /// The partial bytes.
    let partial: URL
    /// The JSON record.
    let record: URL

    /// Next to the destination (`photo.jpg.magpie-partial`), or in `directory` named by a
    /// digest of the URL and destination.
    init(url: URL, destination: URL, directory: URL?) {
        if let directory {
            let name = MD5.hex(url.absoluteString + "\u{1F}" + destination.standardizedFileURL.path)
            partial = directory.appendingPathComponent(name + ".partial")
            record = directory.appendingPathComponent(name + ".json")
        } else {
            partial = URL(fileURLWithPath: destination.path + ".magpie-partial")
            record = URL(fileURLWithPath: destination.path + ".magpie-resume.json")
        }
    }

    func readRecord() -> ResumeRecord? {
        guard let data = try? Data(contentsOf: record) else { return nil }
        return try? JSONDecoder().decode(ResumeRecord.self, from: data)
    }

    /// Writes the record atomically (a temporary file renamed over it).
    func write(_ value: ResumeRecord) throws {
        let data = try JSONEncoder().encode(value)
        try data.write(to: record, options: .atomic)
    }

    /// Bytes in the partial file, 0 when there is none.
    var partialLength: Int64 {
        var info = stat()
        guard stat(partial.path, &info) == 0 else { return 0 }
        return Int64(info.st_size)
    }

    /// What is stored: the partial file's length and the recorded total.
    var kept: TransferProgress {
        TransferProgress(completed: partialLength, expected: readRecord()?.totalLength ?? -1)
    }

    func removeAll() {
        try? FileManager.default.removeItem(at: partial)
        try? FileManager.default.removeItem(at: record)
    }
}

/// An append-only file descriptor for the partial bytes.
final class PartialFile {
    private let fd: Int32
    let url: URL

    /// Opens `url` for appending, truncated first when `truncate`.
    init(_ url: URL, truncate: Bool) throws {
        self.url = url
        let flags = O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC | (truncate ? O_TRUNC : 0)
        let fd = open(url.path, flags, 0o644)
        guard fd >= 0 else {
            throw NetworkError(.fileFailed, url: url, "cannot open \(url.path): \(String(cString: strerror(errno)))")
        }
        self.fd = fd
    }

    deinit { close(fd) }

    /// Appends all of `data`.
    func append(_ data: Data) throws {
        try data.withUnsafeBytes { raw in
            guard var base = raw.baseAddress else { return }
            var left = raw.count
            while left > 0 {
                let written = write(fd, base, left)
                if written < 0 {
                    if errno == EINTR { continue }
                    throw NetworkError(.fileFailed, url: url, "cannot write \(url.path): \(String(cString: strerror(errno)))")
                }
                left -= written
                base += written
            }
        }
    }

    /// Cuts the file to `length` bytes.
    func truncate(to length: Int64) throws {
        guard ftruncate(fd, off_t(length)) == 0 else {
            throw NetworkError(.fileFailed, url: url, "cannot truncate \(url.path): \(String(cString: strerror(errno)))")
        }
    }
}

/// `Content-Range: bytes 100-199/1000` (or `bytes */1000`).
struct ContentRange: Equatable {
    var first: Int64?
    var last: Int64?
    /// -1 when `*`.
    var total: Int64

    init?(_ header: String?) {
        guard let header else { return nil }
        let text = header.trimmingCharacters(in: .whitespaces)
        guard text.lowercased().hasPrefix("bytes ") else { return nil }
        let spec = text.dropFirst(6).trimmingCharacters(in: .whitespaces)
        let halves = spec.split(separator: "/", maxSplits: 1).map(String.init)
        guard halves.count == 2 else { return nil }
        if halves[1] == "*" { total = -1 } else if let value = Int64(halves[1]), value >= 0 { total = value } else { return nil }
        if halves[0] == "*" {
            first = nil
            last = nil
        } else {
            let bounds = halves[0].split(separator: "-", maxSplits: 1).map { Int64($0) }
            guard bounds.count == 2, let a = bounds[0], let b = bounds[1], a <= b else { return nil }
            first = a
            last = b
        }
    }
}
