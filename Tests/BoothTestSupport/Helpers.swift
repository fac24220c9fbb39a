import BoothPorts
import Foundation
import Glibc
import Synchronization

// The helpers every test target used to write for itself: one copy each.

/// The package root (the folder holding Package.swift), from this file's path (Tests/BoothTestSupport/…).
public func packageRoot() -> String {
    var parts = #filePath.split(separator: "/", omittingEmptySubsequences: false)
    parts.removeLast(3)
    return parts.joined(separator: "/")
}

/// A fresh directory under /tmp for one test (`mkdtemp`), removed afterwards by the caller (``removeTree(_:)``).
public func makeTempDir(_ name: String = #function) -> String {
    var template = Array("/tmp/photobooth-test-XXXXXX".utf8CString)
    let path = template.withUnsafeMutableBufferPointer { buf -> String? in
        guard let base = buf.baseAddress else { return nil }
        return mkdtemp(base).map { String(cString: $0) }
    }
    return path ?? "/tmp/photobooth-test-\(getpid())-\(name.count)"
}

/// Removes `path` and everything under it; a missing path is no error.
public func removeTree(_ path: String) { try? FileManager.default.removeItem(atPath: path) }

/// Polls `condition` every 10 ms until it holds or `timeoutSeconds` passed (on the monotonic clock); returns
/// whether it held. For what a real thread, process or device does; the booth's own timers run on the test's
/// manual clock instead. The default is generous: it only runs out when something is wrong, and CI shares 2 cores.
public func eventually(timeoutSeconds: Double = 30, _ condition: () -> Bool) async -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(timeoutSeconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        try? await Task.sleep(for: .milliseconds(10))
    }
    return condition()
}

/// ``eventually(timeoutSeconds:_:)`` for a caller that is not async (a thread of the test's own, a synchronous
/// test): polls `condition` every 5 ms until it holds or `seconds` passed on the monotonic clock.
/// - Returns: whether it held.
@discardableResult
public func waitUntil(_ seconds: Double = 30, _ condition: () -> Bool) -> Bool {
    let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
    while ContinuousClock.now < deadline {
        if condition() { return true }
        usleep(5_000)
    }
    return condition()
}

/// Lines a logger wrote, kept for assertions.
public final class LogLines: Sendable {
    private let lines = Mutex<[String]>([])
    public init() {}
    /// A logger (threshold debug) whose lines are kept here, each as written (with its `<N>` prefix).
    public func logger() -> Logger { Logger(threshold: .debug) { [self] line in lines.withLock { $0.append(line) } } }
    /// Every line so far.
    public var all: [String] { lines.withLock { $0 } }
    /// Whether one line holds every one of `parts`.
    public func contains(_ parts: String...) -> Bool { all.contains { l in parts.allSatisfy { l.contains($0) } } }
    /// Every line so far, joined.
    public var text: String { all.joined() }
}

/// A value shared with a thread the test starts (or the booth's threads).
public final class Box<T: Sendable>: Sendable {
    /// The value, under its lock.
    public let value: Mutex<T>
    public init(_ v: T) { value = Mutex(v) }
    public func set(_ v: T) { value.withLock { $0 = v } }
    public func update(_ f: (inout T) -> Void) { value.withLock { f(&$0) } }
    public var get: T { value.withLock { $0 } }
}
