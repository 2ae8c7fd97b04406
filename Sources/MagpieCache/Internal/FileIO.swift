import Foundation

/// File operations with errno-based errors, so a full disk is told apart from other failures.
enum FileIO {
    static func error(_ what: String, path: String, code: Int32 = errno) -> CacheError {
        let kind: CacheError.Kind = code == ENOSPC || code == EFBIG || code == EDQUOT ? .diskFull : .io
        return CacheError(kind, path: path, "\(what): \(String(cString: strerror(code)))", code: code)
    }

    /// Writes `data` to a new file at `path` (which must not exist), optionally syncing it.
    static func writeNew(_ data: Data, to path: String, sync: Bool) throws(CacheError) {
        let descriptor = open(path, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, 0o644)
        guard descriptor >= 0 else { throw error("cannot create", path: path) }
        var failure: CacheError?
        data.withUnsafeBytes { buffer in
            var offset = 0
            while offset < buffer.count, let base = buffer.baseAddress {
                let n = write(descriptor, base + offset, buffer.count - offset)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = error("cannot write", path: path)
                    return
                }
                offset += n
            }
        }
        if failure == nil, sync, fsync(descriptor) != 0 { failure = error("cannot sync", path: path) }
        if close(descriptor) != 0, failure == nil { failure = error("cannot close", path: path) }
        if let failure {
            unlink(path)
            throw failure
        }
    }

    /// The whole file, or nil if it does not exist.
    static func read(_ path: String) throws(CacheError) -> Data? {
        let descriptor = open(path, O_RDONLY | O_CLOEXEC)
        guard descriptor >= 0 else {
            if errno == ENOENT { return nil }
            throw error("cannot open", path: path)
        }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw error("cannot stat", path: path) }
        var data = Data(count: Int(status.st_size))
        var total = 0
        var failure: CacheError?
        data.withUnsafeMutableBytes { buffer in
            while total < buffer.count, let base = buffer.baseAddress {
                let n = Foundation.read(descriptor, base + total, buffer.count - total)
                if n < 0 {
                    if errno == EINTR { continue }
                    failure = error("cannot read", path: path)
                    return
                }
                if n == 0 { break }
                total += n
            }
        }
        if let failure { throw failure }
        if total < data.count { data.count = total }
        return data
    }

    static func rename(_ from: String, _ to: String) throws(CacheError) {
        guard Foundation.rename(from, to) == 0 else { throw error("cannot rename", path: to) }
    }

    static func remove(_ path: String) {
        unlink(path)
    }

    static func size(_ path: String) -> Int64? {
        var status = stat()
        return stat(path, &status) == 0 ? Int64(status.st_size) : nil
    }

    static func modificationDate(_ path: String) -> Date? {
        var status = stat()
        guard stat(path, &status) == 0 else { return nil }
        return Date(timeIntervalSince1970: Double(status.st_mtim.tv_sec) + Double(status.st_mtim.tv_nsec) / 1e9)
    }

    /// Bytes free for unprivileged writers on the file system holding `path`.
    static func freeSpace(_ path: String) -> Int64? {
        var status = statvfs()
        guard statvfs(path, &status) == 0 else { return nil }
        return Int64(status.f_bavail) * Int64(status.f_frsize)
    }

    static func makeDirectory(_ path: String) throws(CacheError) {
        do {
            try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        } catch {
            throw CacheError(.cannotOpen, path: path, "cannot create the directory: \(error.localizedDescription)")
        }
    }

    static func list(_ path: String) -> [String] {
        (try? FileManager.default.contentsOfDirectory(atPath: path)) ?? []
    }

    /// A random hex suffix, so two writes of one key never share a file.
    static func uniqueSuffix() -> String {
        var generator = SystemRandomNumberGenerator()
        return String(generator.next() as UInt64, radix: 16)
    }
}
