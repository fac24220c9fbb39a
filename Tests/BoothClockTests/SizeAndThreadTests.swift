import BoothClock
import BoothTestSupport
import Foundation
import Glibc
import Synchronization
import Testing

/// The booth's own threads (``OSThread``, which replaced Foundation's `Thread`), and the rule that keeps
/// the programs small: no module the programs link imports the full Foundation, whose ICU data alone is
/// 34 MB of each static binary (install.sh's release build; the install test checks the sizes).
@Suite struct SizeAndThreadTests {
    @Test func osThreadRunsItsBodyUnderItsNameOnAThreadOfItsOwn() async throws {
        let seen = Mutex<(name: String, thread: pthread_t)?>(nil)
        let done = Mutex(false)
        // The caller's thread, read before start and with no suspension point between: after an await
        // the test may go on on another thread, and an ended thread's pthread_t can be handed out again.
        let caller = pthread_self()
        let started = OSThread.start(name: "pb-test-thread") {
            // The kernel's name of this thread, as ps -L and top -H show it.
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            seen.withLock { $0 = (comm.trimmingCharacters(in: .whitespacesAndNewlines), pthread_self()) }
            // Alive until the test has compared (at most 10 s), so its pthread_t is nobody else's.
            for _ in 0..<10_000 where !done.withLock({ $0 }) { usleep(1_000) }
        }
        defer { done.withLock { $0 = true } }
        #expect(started)
        _ = await eventually(timeoutSeconds: 2) { seen.withLock { $0 } != nil }
        let got = try #require(seen.withLock { $0 }, "the thread's body never ran")
        #expect(got.name == "pb-test-thread")
        #expect(pthread_equal(got.thread, caller) == 0, "the body ran on the caller's thread")
    }

    /// `pthread_setname_np` refuses a name over 15 bytes (ERANGE) and leaves the creator's name: the
    /// button's "photobooth-button" (17 bytes) was never set. OSThread cuts it to 15.
    @Test func aLongThreadNameIsCutToTheKernelsFifteenBytes() async throws {
        let seen = Mutex<String?>(nil)
        #expect(OSThread.start(name: "photobooth-button") {
            let comm = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? ""
            seen.withLock { $0 = comm.trimmingCharacters(in: .whitespacesAndNewlines) }
        })
        _ = await eventually(timeoutSeconds: 2) { seen.withLock { $0 } != nil }
        #expect(seen.withLock { $0 } == "photobooth-butt")
    }

    @Test func noSourceOfTheProgramsImportsTheFullFoundation() throws {
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("Sources")
        let files = try #require(FileManager.default.enumerator(atPath: root.path)).compactMap { $0 as? String }
            .filter { $0.hasSuffix(".swift") }
        #expect(files.count > 50, "Sources not found at \(root.path)")
        let offenders = try files.filter { file in
            let text = try String(contentsOfFile: root.appendingPathComponent(file).path, encoding: .utf8)
            return text.split(separator: "\n").contains { $0.trimmingCharacters(in: .whitespaces) == "import Foundation" }
        }
        #expect(offenders.isEmpty, "import FoundationEssentials instead (the full Foundation adds ICU, 34 MB a binary): \(offenders)")
    }
}
