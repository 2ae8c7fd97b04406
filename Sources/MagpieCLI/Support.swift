import Foundation

/// Reads whole files with messages people understand ("No such file or directory").
enum FileInput {
    struct ReadError: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "cannot read \(path): \(reason)" }
    }

    static func read(_ path: String) throws -> Data {
        let descriptor = open(path, O_RDONLY)
        guard descriptor >= 0 else { throw ReadError(path: path, reason: String(cString: strerror(errno))) }
        defer { close(descriptor) }
        var status = stat()
        guard fstat(descriptor, &status) == 0 else { throw ReadError(path: path, reason: String(cString: strerror(errno))) }
        guard (status.st_mode & S_IFMT) == S_IFREG else { throw ReadError(path: path, reason: "not a regular file") }
        var data = Data(count: Int(status.st_size))
        var total = 0
        try data.withUnsafeMutableBytes { buffer in
            guard let base = buffer.baseAddress else { return }
            while total < buffer.count {
                let n = Foundation.read(descriptor, base + total, buffer.count - total)
                if n < 0 {
                    if errno == EINTR { continue }
                    throw ReadError(path: path, reason: String(cString: strerror(errno)))
                }
                if n == 0 { break }
                total += n
            }
        }
        if total < data.count { data.count = total }
        return data
    }
}

/// Writes files atomically: to a temporary name in the same directory, then renamed.
enum FileOutput {
    struct WriteError: Error, CustomStringConvertible {
        var path: String
        var reason: String
        var description: String { "cannot write \(path): \(reason)" }
    }

    static func write(_ data: Data, to path: String) throws {
        do {
            try data.write(to: URL(fileURLWithPath: path), options: .atomic)
        } catch let error as CocoaError {
            let reason = (error.userInfo[NSUnderlyingErrorKey] as? NSError).map { String(cString: strerror(Int32($0.code))) }
            throw WriteError(path: path, reason: reason ?? error.localizedDescription)
        }
    }
}

/// Runs `transform` over `items` on all cores, keeping the input order.
enum ParallelMap {
    static func run<T: Sendable, R: Sendable>(
        _ items: [T], width: Int = ProcessInfo.processInfo.activeProcessorCount,
        _ transform: @escaping @Sendable (T) -> R
    ) async -> [R] {
        await withTaskGroup(of: (Int, R).self) { group in
            var results = [R?](repeating: nil, count: items.count)
            var next = 0
            for _ in 0..<min(max(width, 1), items.count) {
                let index = next
                group.addTask { (index, transform(items[index])) }
                next += 1
            }
            for await (index, result) in group {
                results[index] = result
                if next < items.count {
                    let index = next
                    group.addTask { (index, transform(items[index])) }
                    next += 1
                }
            }
            return results.compactMap { $0 }
        }
    }
}
