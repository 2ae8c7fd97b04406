import Foundation

/// One nginx worker on 127.0.0.1 serving `root`, with sendfile and no access log: the server
/// the network and pipeline benchmarks measure Magpie and its peers against.
public final class LoopbackNginx: @unchecked Sendable {  // started once in Benchmark.setup, then read only
    /// Where its configuration, pid file, logs and temporary files go.
    public let directory: URL
    /// The directory it serves.
    public let root: URL
    public let port: Int
    private var pid: pid_t?

    /// - Parameters:
    ///   - types: the `types { }` block's entries, as "mime/type ext".
    public init(directory: URL, root: URL, port: Int, types: [String]) throws {
        self.directory = directory
        self.root = root
        self.port = port
        let config = """
            worker_processes 1;
            daemon off;
            pid \(directory.path)/nginx.pid;
            error_log \(directory.path)/error.log;
            events { worker_connections 1024; }
            http {
                access_log off;
                sendfile on;
                keepalive_requests 1000000;
                client_body_temp_path \(directory.path)/body;
                proxy_temp_path \(directory.path)/proxy;
                fastcgi_temp_path \(directory.path)/fastcgi;
                uwsgi_temp_path \(directory.path)/uwsgi;
                scgi_temp_path \(directory.path)/scgi;
                types { \(types.map { "\($0);" }.joined(separator: " ")) }
                server { listen 127.0.0.1:\(port); root \(root.path); }
            }
            """
        try config.write(to: directory.appendingPathComponent("nginx.conf"), atomically: true, encoding: .utf8)
    }

    /// The URL of `path` on this server.
    public func url(_ path: String) -> URL { URL(string: "http://127.0.0.1:\(port)/\(path)")! }

    /// Starts nginx and waits until `probe` (a path it serves) answers.
    public func start(probe: String) throws {
        // Through python's execv after closing every inherited descriptor: nginx must not hold the
        // benchmark plugin's pipes, or a crashed run would leave the plugin waiting forever.
        pid = try spawn("python3", [
            "-c", "import os, sys; os.closerange(3, 65536); os.execv('/usr/sbin/nginx', ['nginx'] + sys.argv[1:])",
            "-c", directory.appendingPathComponent("nginx.conf").path, "-p", directory.path,
        ], quiet: true)
        for _ in 0..<200 {
            if (try? Data(contentsOf: url(probe))) != nil { return }
            usleep(20_000)
        }
    }

    public func stop() {
        guard let pid else { return }
        kill(pid, SIGTERM)
        _ = try? wait(for: pid)
        self.pid = nil
    }
}

// Children are started with posix_spawnp and reaped with waitpid, not with Foundation's Process:
// inside the benchmark runner, Process never noticed its children exit (they stayed zombies and
// waitUntilExit never returned).

/// Starts a program found on PATH with a clean signal mask (the runner's threads block most
/// signals and ignore SIGPIPE; a child would inherit both, and Python's Pool then never sees the
/// SIGTERM that ends its workers). Standard output goes to /dev/null; with `quiet`, standard
/// error too.
public func spawn(_ path: String, _ arguments: [String], quiet: Bool = false) throws -> pid_t {
    let argv = ([path] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 1, "/dev/null", O_WRONLY, 0)
    if quiet { posix_spawn_file_actions_addopen(&actions, 2, "/dev/null", O_WRONLY, 0) }
    var attributes = posix_spawnattr_t()
    posix_spawnattr_init(&attributes)
    defer { posix_spawnattr_destroy(&attributes) }
    var empty = sigset_t()
    sigemptyset(&empty)
    var all = sigset_t()
    sigfillset(&all)
    posix_spawnattr_setsigmask(&attributes, &empty)
    posix_spawnattr_setsigdefault(&attributes, &all)
    posix_spawnattr_setflags(&attributes, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    var pid: pid_t = 0
    let result = posix_spawnp(&pid, path, &actions, &attributes, argv, environ)
    guard result == 0 else { throw SpawnFailure(message: "posix_spawn \(path): \(String(cString: strerror(result)))") }
    return pid
}

/// Waits for a child; returns its wait status (0: it exited with 0).
public func wait(for pid: pid_t) throws -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) == -1 {
        guard errno == EINTR else { throw SpawnFailure(message: "waitpid: \(String(cString: strerror(errno)))") }
    }
    return status
}

/// Runs a program found on PATH to its end; returns its wait status (0: it exited with 0).
public func spawnAndWait(_ path: String, _ arguments: [String]) throws -> Int32 {
    try wait(for: spawn(path, arguments))
}

/// A peer program could not be started or waited for, or failed.
public struct SpawnFailure: Error, CustomStringConvertible {
    public var message: String
    public init(message: String) { self.message = message }
    public var description: String { message }
}
