import BoothTestSupport
import BoothClock
import BoothCore
import BoothPorts
import Synchronization
import Testing
@testable import BoothRuntime

// SIGHUP's reloads run on the runtime's "reload" thread, made at the first one. A moment at the thread
// limit (pthread_create failing) loses that reload, said in the log; it must not lose every later one.

@Suite("SIGHUP's reload thread")
struct ReloadThreadTests {
    @Test("a reload thread that could not be made is made at the next SIGHUP, whose reload runs")
    func failedStartIsTriedAgain() async throws {
        let attempts = Mutex(0)
        let requests = ReloadRequests(clock: ManualClock()) { queue in
            // The first pthread_create fails (the thread limit); the later ones succeed.
            let n = attempts.withLock { $0 += 1; return $0 }
            return n == 1 ? false : queue.start { $0.run() }
        }
        let ran = Mutex(0)
        #expect(!requests.send { ran.withLock { $0 += 1 } }, "no thread: this reload is not run")
        #expect(requests.send { ran.withLock { $0 += 1 } }, "the next SIGHUP makes the thread")
        #expect(await eventually(timeoutSeconds: 5) { ran.withLock { $0 } == 1 })
        #expect(attempts.withLock { $0 } == 2)
        // Once it runs, no more threads are made.
        #expect(requests.send { ran.withLock { $0 += 1 } })
        #expect(await eventually(timeoutSeconds: 5) { ran.withLock { $0 } == 2 })
        #expect(attempts.withLock { $0 } == 2)
    }

    @Test("the reload thread a SIGHUP made ends when the booth stops: no thread is left behind by a stopped booth")
    func reloadThreadEndsAtShutdown() async throws {
        let dir = makeTempDir("reload-thread")
        defer { removeTree(dir) }
        let settings = try Settings.defaults.with(overrides: [
            ("storage.dir", "\(dir)/photos"), ("storage.session_file", "\(dir)/session-number"), ("preview.file", ""),
            ("storage.min_free", "0B"), ("print.journal", "\(dir)/journal.json"), ("print.spool", "\(dir)/spool"),
        ]).get()
        let booth = TestBooth(settings)
        booth.start()
        defer { booth.shutdownAndWait() }
        #expect(booth.runtime.reloadInBackground())
        #expect(await eventually(timeoutSeconds: 10) { booth.logged("settings reloaded: nothing changed") }, "\(booth.logText)")
        #expect(!booth.runtime.reloads.threadEnded, "the SIGHUP made the reload thread")
        booth.shutdownAndWait()
        #expect(booth.exited != nil)
        #expect(await eventually(timeoutSeconds: 5) { booth.runtime.reloads.threadEnded }, "the reload thread outlived the booth")
    }
}
