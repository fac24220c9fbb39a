import BoothSystem
import Foundation
import Glibc
import Synchronization
import Testing

/// A no-op handler installed without SA_RESTART, so a signal makes a blocked write(2) return early.
private func installInterruptingHandler() {
    var action = sigaction()
    action.__sigaction_handler.sa_handler = { _ in }
    sigemptyset(&action.sa_mask)
    action.sa_flags = 0
    sigaction(SIGUSR1, &action, nil)
}

@Suite struct WriteAllTests {
    @Test("short writes and EINTR lose nothing: every byte arrives once, in order")
    func shortWritesAndEINTR() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        let payload = (0..<10_000).map { UInt8(truncatingIfNeeded: $0 &* 7) }
        var calls = 0
        // At most 3 bytes a call, and every third call interrupted before it writes.
        try writeAll(payload, to: fds[1]) { fd, base, count in
            calls += 1
            if calls % 3 == 0 { errno = EINTR; return -1 }
            return Glibc.write(fd, base, min(count, 3))
        }
        close(fds[1])
        var got: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 4096)
        while true {
            let n = read(fds[0], &chunk, chunk.count)
            if n <= 0 { break }
            got += chunk[0..<n]
        }
        #expect(got == payload)
        #expect(calls > payload.count / 3)
    }

    @Test("a signal during a blocked write to a full pipe: the write is continued, nothing lost")
    func realSignal() throws {
        installInterruptingHandler()
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        _ = fcntl(fds[1], 1031, 4096)  // F_SETPIPE_SZ (a _GNU_SOURCE name): a small pipe fills at once
        let payload = (0..<300_000).map { UInt8(truncatingIfNeeded: $0 &* 31 &+ 5) }
        let writerThread = Mutex<pthread_t?>(nil)
        let early = Atomic<Int>(0)
        let result = Mutex<SystemCallError?>(nil)
        let done = Atomic<Bool>(false)
        let writeEnd = fds[1]
        let thread = Thread {
            // Threads made from the test pool's inherit its blocked signals: let SIGUSR1 in on this one.
            var set = sigset_t()
            sigemptyset(&set)
            sigaddset(&set, SIGUSR1)
            pthread_sigmask(SIG_UNBLOCK, &set, nil)
            writerThread.withLock { $0 = pthread_self() }
            do throws(SystemCallError) {
                try writeAll(payload, to: writeEnd) { fd, base, count in
                    let n = Glibc.write(fd, base, count)
                    if n < 0 && errno == EINTR || n >= 0 && n < count { early.add(1, ordering: .relaxed) }
                    return n
                }
            } catch { result.withLock { $0 = error } }
            close(writeEnd)
            done.store(true, ordering: .releasing)
        }
        thread.start()
        var got: [UInt8] = []
        var chunk = [UInt8](repeating: 0, count: 1000)
        var reads = 0
        while true {
            let n = read(fds[0], &chunk, chunk.count)
            if n < 0 && errno == EINTR { continue }
            if n <= 0 { break }
            got += chunk[0..<n]
            reads += 1
            // The writer is blocked on the full pipe most of the time: interrupt it now and then.
            if reads % 10 == 0, !done.load(ordering: .acquiring), let t = writerThread.withLock({ $0 }) {
                pthread_kill(t, SIGUSR1)
            }
            usleep(200)
        }
        while !done.load(ordering: .acquiring) { usleep(1000) }
        #expect(result.withLock { $0 } == nil)
        #expect(got == payload)
        #expect(early.load(ordering: .relaxed) > 0, "no write was cut short: the test did not exercise the retry")
    }

    @Test("a failed write throws the call, errno and subject")
    func failure() {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        close(fds[0])
        defer { close(fds[1]) }
        signal(SIGPIPE, SIG_IGN)
        #expect(throws: SystemCallError(call: "write", errno: EPIPE, subject: "the pipe")) {
            try writeAll([1, 2, 3], to: fds[1], subject: "the pipe")
        }
    }

    @Test("a write that takes nothing and sets no error is EIO, not a loop")
    func zeroWrite() {
        #expect(throws: SystemCallError(call: "send", errno: EIO, subject: "")) {
            try writeAll([1], to: -1, call: "send") { _, _, _ in 0 }
        }
    }
}

@Suite struct FileDescriptorTests {
    @Test("closes once: a second close and the deinit leave a reused number alone")
    func closesOnce() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        var owner: FileDescriptor? = FileDescriptor(owning: fds[1])
        #expect(owner?.isOpen == true)
        #expect(owner?.close() == true)
        #expect(owner?.rawValue == -1)
        // The write end is closed: the reader sees end of file.
        var byte: UInt8 = 0
        #expect(read(fds[0], &byte, 1) == 0)
        // The kernel hands the same number to the next open; the owner must not close it again.
        let reused = open("/dev/null", O_WRONLY)
        #expect(reused == fds[1])
        defer { close(reused) }
        #expect(owner?.close() == false)
        owner = nil
        #expect(fcntl(reused, F_GETFD) >= 0, "the reused descriptor was closed by the old owner")
    }

    @Test("closes when it goes away")
    func closesAtDeinit() throws {
        var fds: [Int32] = [0, 0]
        #expect(pipe(&fds) == 0)
        defer { close(fds[0]) }
        do {
            let owner = FileDescriptor(owning: fds[1])
            _ = owner.rawValue
        }
        var byte: UInt8 = 0
        #expect(read(fds[0], &byte, 1) == 0)
    }

    @Test("open throws the call, errno and path")
    func openFails() {
        #expect(throws: SystemCallError(call: "open", errno: ENOENT, subject: "/nonexistent/x")) {
            _ = try FileDescriptor.open("/nonexistent/x", O_RDONLY)
        }
    }
}
