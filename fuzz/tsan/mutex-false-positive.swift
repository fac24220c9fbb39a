// Why fuzz/tsan.supp exists: ThreadSanitizer does not see Synchronization.Mutex on Linux (Swift 6.3.1).
// Four threads add to a counter only ever touched inside `Mutex.withLock`; the count comes out exact, yet
// TSan reports a "Swift access race" on it. Mutex's contended lock and unlock run in the uninstrumented
// libswiftSynchronization (futex calls), so TSan never sees the acquire/release.
//   swiftc -sanitize=thread fuzz/tsan/mutex-false-positive.swift -o /tmp/mfp && /tmp/mfp
import Foundation
import Synchronization

final class Box: Sendable {
    let state = Mutex(0)
}

let box = Box()
for _ in 0..<4 {
    Thread {
        for _ in 0..<200_000 { box.state.withLock { $0 += 1 } }
    }.start()
}
while box.state.withLock({ $0 }) < 800_000 { usleep(1000) }
print("count", box.state.withLock { $0 }, "(800000 expected)")
