import CSysShims
import Glibc

/// A thread the booth owns, for blocking C calls (DQBUF, gpiod waits, CUPS, accept, fsync) that must
/// never run on Swift's cooperative pool. Replaces Foundation's `Thread`, which is only in the full
/// Foundation (and with it 34 MB of ICU data in every static binary).
///
/// The thread is detached: it ends when `body` returns; callers that wait for the end do so with their
/// own condition (``MonotonicCondition``) or flag, as before.
public enum OSThread {
    /// Starts `body` on a new detached POSIX thread named `name` (`ps -L`, `top -H`,
    /// /proc/self/task/*/comm). The kernel takes at most 15 bytes and `pthread_setname_np` refuses a
    /// longer name outright (ERANGE), so the name is cut to its first 15 bytes (whole UTF-8 characters).
    /// Wraps `pthread_create` with a detached attribute, then `pthread_setname_np` from inside the new
    /// thread.
    /// - Returns: false when `pthread_create` failed (EAGAIN, the process or system thread limit, is
    ///   tried again every 100 ms for 1 s first: a bounded retry is the wait there, as no event tells when
    ///   a thread elsewhere ends and frees its slot), after which `body` never runs. Each caller says what
    ///   that costs: a device thread becomes a device fault, a worker's is logged as an error (the
    ///   watchdog's liveness check then sees the worker missing and systemd restarts the booth).
    @discardableResult
    public static func start(name: String, _ body: @escaping @Sendable () -> Void) -> Bool {
        let box = Unmanaged.passRetained(ThreadBody(name: kernelThreadName(name), body: body)).toOpaque()
        var attr = pthread_attr_t()
        pthread_attr_init(&attr)
        defer { pthread_attr_destroy(&attr) }
        pthread_attr_setdetachstate(&attr, Int32(PTHREAD_CREATE_DETACHED))
        var thread = pthread_t()
        var rc: Int32 = 0
        for attempt in 0..<11 {
            if attempt > 0 { usleep(100_000) }
            rc = pthread_create(&thread, &attr, { raw in
                guard let raw else { return nil }
                let body = Unmanaged<ThreadBody>.fromOpaque(raw).takeRetainedValue()
                _ = pb_set_current_thread_name(body.name)
                body.body()
                return nil
            }, box)
            if rc != EAGAIN { break }
        }
        if rc != 0 { Unmanaged<ThreadBody>.fromOpaque(box).release() }
        return rc == 0
    }
}

/// `name` cut to the kernel's 15 bytes for a thread name, never inside a UTF-8 character.
func kernelThreadName(_ name: String) -> String {
    var out = ""
    var bytes = 0
    for c in name {
        let n = String(c).utf8.count
        guard bytes + n <= 15 else { break }
        out.append(c)
        bytes += n
    }
    return out
}

private final class ThreadBody: Sendable {
    let name: String
    let body: @Sendable () -> Void
    init(name: String, body: @escaping @Sendable () -> Void) { self.name = name; self.body = body }
}
