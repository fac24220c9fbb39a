import Foundation
import Glibc

// Child processes for the tests that run the built programs, cupsd or helpers: one way to start them.

/// Starts `path` with `args`, stdout and stderr appended to `output`, stdin from /dev/null, in `cwd`
/// when given (through `/bin/sh -c 'cd DIR && exec …'`), the environment plus `env`, an empty signal
/// mask and default signal actions: the test process blocks signals its threads wait for, and a
/// daemon started with that mask would ignore SIGTERM and never reap its children. Stdout goes to a
/// file, not a pipe, so a daemon left behind never holds one of ours. Wraps `posix_spawn`.
/// - Returns: the child's pid, or a value ≤ 0 when `posix_spawn` failed.
public func spawnProcess(_ path: String, _ args: [String], cwd: String? = nil, env: [String: String] = [:],
                         output: String) -> pid_t {
    var environment = ProcessInfo.processInfo.environment
    for (k, v) in env { environment[k] = v }
    func quoted(_ s: String) -> String { "'" + s.replacingOccurrences(of: "'", with: "'\\''") + "'" }
    let words: [String] = cwd.map { ["/bin/sh", "-c", "cd \(quoted($0)) && exec " + ([path] + args).map(quoted).joined(separator: " ")] }
        ?? [path] + args
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, output, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    posix_spawn_file_actions_adddup2(&actions, 1, 2)
    var attr = posix_spawnattr_t()
    posix_spawnattr_init(&attr)
    defer { posix_spawnattr_destroy(&attr) }
    var empty = sigset_t(), all = sigset_t()
    sigemptyset(&empty)
    sigfillset(&all)
    sigdelset(&all, SIGKILL)
    sigdelset(&all, SIGSTOP)
    posix_spawnattr_setsigmask(&attr, &empty)
    posix_spawnattr_setsigdefault(&attr, &all)
    posix_spawnattr_setflags(&attr, Int16(POSIX_SPAWN_SETSIGMASK | POSIX_SPAWN_SETSIGDEF))
    let argv: [UnsafeMutablePointer<CChar>?] = words.map { strdup($0) } + [nil]
    let envp: [UnsafeMutablePointer<CChar>?] = environment.map { strdup("\($0.key)=\($0.value)") } + [nil]
    defer { for p in argv + envp { free(p) } }
    var pid: pid_t = 0
    guard posix_spawn(&pid, words[0], &actions, &attr, argv, envp) == 0 else { return -1 }
    return pid
}

/// Runs `path` with `args` (``spawnProcess``: the environment plus `env`, an empty signal mask, stdout and
/// stderr to a temp file, never a pipe a daemon it leaves behind could hold) and waits for its end.
/// - Returns: its exit status (128 + the signal that ended it; -1 when `posix_spawn` failed) and its output.
@discardableResult
public func run(_ path: String, _ args: [String], env: [String: String] = [:]) -> (Int32, String) {
    let outPath = NSTemporaryDirectory() + "run-\(getpid())-\(UInt32.random(in: 0...UInt32.max)).out"
    defer { unlink(outPath) }
    let pid = spawnProcess(path, args, env: env, output: outPath)
    guard pid > 0 else { return (-1, "posix_spawn \(path) failed") }
    let status = waitFor(pid)
    let out = FileManager.default.contents(atPath: outPath).map { String(decoding: $0, as: UTF8.self) } ?? ""
    return (status, out)
}

/// Waits for `pid` to end (`waitpid`, EINTR retried); its exit status, or 128 + the signal that ended it.
public func waitFor(_ pid: pid_t) -> Int32 {
    var status: Int32 = 0
    while waitpid(pid, &status, 0) < 0 && errno == EINTR {}
    return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f)
}

/// The exit status of `pid` (128 + the signal that ended it) once it ends within `seconds` (on the
/// monotonic clock), else nil: still running. Wraps `waitpid(WNOHANG)`.
public func exitStatus(of pid: pid_t, within seconds: Double) -> Int32? {
    let deadline = ProcessInfo.processInfo.systemUptime + seconds
    var status: Int32 = 0
    while true {
        let r = waitpid(pid, &status, WNOHANG)
        if r == pid { return (status & 0x7f) == 0 ? (status >> 8) & 0xff : 128 + (status & 0x7f) }
        if r < 0 && errno != EINTR { return nil }
        if ProcessInfo.processInfo.systemUptime >= deadline { return nil }
        usleep(20_000)
    }
}

/// The text of the QR code(s) zbarimg (zbar-tools) reads in the image file at `path`, one a code;
/// empty when it finds none. - Throws: ``ZbarMissing`` when zbarimg is not installed.
public func zbarRead(_ path: String) throws -> [String] {
    guard access("/usr/bin/zbarimg", X_OK) == 0 else { throw ZbarMissing() }
    let out = Pipe()
    let p = Process()
    p.executableURL = URL(fileURLWithPath: "/usr/bin/zbarimg")
    p.arguments = ["--quiet", "--raw", path]
    p.standardOutput = out
    p.standardError = FileHandle.nullDevice
    try p.run()
    p.waitUntilExit()
    let text = String(decoding: out.fileHandleForReading.readDataToEndOfFile(), as: UTF8.self)
    return text.split(separator: "\n").map(String.init)
}

public struct ZbarMissing: Error, CustomStringConvertible {
    public init() {}
    public var description: String { "zbarimg is missing: apt-get install zbar-tools (install.sh --test installs it)" }
}
