import CSysShims
import Glibc

/// A thread the booth owns, for blocking C calls (DQBUF, gpiod waits, CUPS, accept, fsync) that must
/// never run on Swift's cooperative pool. Replaces Foundation's `Thread`, which is only in the full
/// Foundation (and with it 34 MB of ICU data in every static binary).
///
/// The thread is detached: it ends when `body` returns; callers that wait for the end do so with their
/// own condition (``MonotonicCondition``) or flag, as before.
public enum OSThread {
    /// Starts `body` on a new detached POSIX thread named `name` (the kernel keeps 15 bytes: `ps -L`,
    /// `top -H`, /proc/self/task/*/comm). Wraps `pthread_create` with a detached attribute, then
    /// `pthread_setname_np` from inside the new thread.
    /// - Returns: false when `pthread_create` failed (EAGAIN: the process or system thread limit),
    ///   after which `body` never runs.
    @discardableResult
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(ThreadBody(name: name, body: body)).toOpaque()
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        let rc = pthread_create(&thread, &attr, { raw in
            guard let raw else { return nil }
            let body = Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue()
            _ = pb_set_current_thread_name(body.name)
            body.body()
            return nil
        }, box)
        if rc != 0 { Unmanaged<ThreadBody>.fromOpaque(box).release() }
        return rc == 0
    }
}

private final class ThreadBody: Sendable {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
}
