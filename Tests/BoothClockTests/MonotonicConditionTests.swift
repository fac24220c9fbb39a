import BoothClock
import BoothCore
import BoothSystem
import BoothTestSupport
import Foundation
import Synchronization
import Testing

/// `MonotonicCondition`: the waits the runtime's threads use, with deadlines on CLOCK_MONOTONIC.
/// (That a wall clock moved under them changes nothing is `hardware/system-tests/clock-test.sh`.)
@Suite struct MonotonicConditionTests {
    @Test func aTimedWaitEndsAtItsMonotonicDeadline() {
        let condition = MonotonicCondition()
        let start = Monotonic.now()
        condition.lock()
        let signalled = condition.wait(until: start.adding(milliseconds: 60))
        condition.unlock()
        let waited = Monotonic.now().milliseconds(since: start)
        #expect(!signalled)
        #expect(waited >= 60)
        #expect(waited < 2000)
    }

    @Test func aDeadlineInThePastTimesOutAtOnce() {
        let condition = MonotonicCondition()
        let start = Monotonic.now()
        condition.lock()
        let signalled = condition.wait(until: start.adding(milliseconds: -1000))
        let zero = condition.wait(milliseconds: 0)
        condition.unlock()
        #expect(!signalled)
        #expect(!zero)
        #expect(Monotonic.now().milliseconds(since: start) < 500)
    }

    @Test func aSignalEndsTheWaitBeforeItsDeadline() {
        let condition = MonotonicCondition()
        let flag = Mutex(false)
        let start = Monotonic.now()
        let t = Thread {
            usleep(30_000)
            condition.lock(); flag.withLock { $0 = true }; condition.signal(); condition.unlock()
        }
        t.start()
        condition.lock()
        var timedOut = false
        while !flag.withLock({ $0 }) && !timedOut {
            timedOut = !condition.wait(milliseconds: 10_000)
        }
        condition.unlock()
        #expect(!timedOut)
        #expect(flag.withLock { $0 })
        #expect(Monotonic.now().milliseconds(since: start) < 5000)
    }

    @Test func theOneMonotonicReadingAgreesWithClockGettime() {
        var ts = timespec()
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let before = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        let now = Monotonic.now().nanoseconds
        clock_gettime(CLOCK_MONOTONIC, &ts)
        let after = UInt64(ts.tv_sec) * 1_000_000_000 + UInt64(ts.tv_nsec)
        #expect(before <= now && now <= after)
    }
}

/// `WorkerThread` and `WorkQueue`: the one worker-thread helper (wake, wait with a deadline, finish
/// with a timeout).
@Suite struct WorkerThreadTests {
    @Test func aQueueRunsItsJobsInOrderOnItsOwnNamedThread() {
        let queue = WorkQueue<Int>(name: "test-queue")
        let done = Mutex<[Int]>([]), names = Mutex<Set<String>>([])
        #expect(queue.start { n in
            let name = (try? String(contentsOfFile: "/proc/thread-self/comm", encoding: .utf8)) ?? "?"
            names.withLock { _ = $0.insert(name.trimmingCharacters(in: .whitespacesAndNewlines)) }
            usleep(1_000)
            done.withLock { $0.append(n) }
        })
        for n in 0..<20 { queue.send(n) }
        #expect(queue.finish(timeoutMilliseconds: 10_000), "the queued jobs finish before the thread ends")
        #expect(done.withLock { $0 } == Array(0..<20))
        #expect(names.withLock { $0 } == ["test-queue"])
        #expect(queue.pending == 0)
        queue.send(99)
        usleep(20_000)
        #expect(!done.withLock { $0.contains(99) }, "a job sent after finish is not run")
    }

    @Test func aQueueKeptAtALimitDropsItsOldestWaitingJobNotTheRunningOne() {
        let queue = WorkQueue<Int>(name: "limit-queue")
        let release = Mutex(false), started = Mutex(false), done = Mutex<[Int]>([])
        queue.start { n in
            started.withLock { $0 = true }
            while !release.withLock({ $0 }) { usleep(1_000) }
            done.withLock { $0.append(n) }
        }
        #expect(queue.send(0, keepingAtMost: 2) == nil)
        #expect(waitUntil(5) { started.withLock { $0 } }, "job 0 runs and holds the thread")
        #expect(queue.send(1, keepingAtMost: 2) == nil)
        #expect(queue.send(2, keepingAtMost: 2) == nil)
        #expect(queue.send(3, keepingAtMost: 2) == 1, "three waiting: the oldest waiting one goes")
        #expect(queue.send(4, keepingAtMost: 2) == 2)
        #expect(queue.pending == 3, "the running job and two waiting")
        release.withLock { $0 = true }
        #expect(queue.finish(timeoutMilliseconds: 10_000))
        #expect(done.withLock { $0 } == [0, 3, 4])
    }

    @Test func cancelWaitingTakesTheQueuedJobsAndLetsTheRunningOneEnd() {
        let queue = WorkQueue<Int>(name: "cancel-queue")
        let release = Mutex(false), started = Mutex(false), done = Mutex<[Int]>([])
        queue.start { n in
            started.withLock { $0 = true }
            while !release.withLock({ $0 }) { usleep(1_000) }
            done.withLock { $0.append(n) }
        }
        queue.send(0)
        #expect(waitUntil(5) { started.withLock { $0 } })
        queue.send(1)
        queue.send(2)
        #expect(!queue.finish(timeoutMilliseconds: 20), "job 0 still runs")
        #expect(queue.cancelWaiting() == [1, 2])
        #expect(queue.pending == 1)
        release.withLock { $0 = true }
        #expect(queue.finish(timeoutMilliseconds: 10_000), "the running job ends, then the thread")
        #expect(done.withLock { $0 } == [0], "the cancelled jobs never ran")
        #expect(queue.cancelWaiting().isEmpty)
    }

    @Test func finishGivesUpAtItsTimeoutWhileAJobRuns() {
        let queue = WorkQueue<Int>(name: "slow-queue")
        let release = Mutex(false), started = Mutex(false)
        queue.start { _ in
            started.withLock { $0 = true }
            while !release.withLock({ $0 }) { usleep(1_000) }
        }
        queue.send(1)
        #expect(waitUntil(5) { started.withLock { $0 } })
        let start = Monotonic.now()
        #expect(!queue.finish(timeoutMilliseconds: 50), "the job still runs")
        let waited = Monotonic.now().milliseconds(since: start)
        #expect(waited >= 50 && waited < 2_000)
        #expect(queue.pending == 1)
        release.withLock { $0 = true }
        #expect(queue.finish(timeoutMilliseconds: 5_000))
        #expect(queue.pending == 0)
    }

    @Test func aWaitEndsAtItsDeadlineOnAWakeAndOnFinish() {
        let worker = WorkerThread(name: "test-worker")
        let wakes = Mutex<[WorkerThread.Wake]>([])
        let work = Mutex(0)
        #expect(worker.hasEnded, "not started yet")
        worker.start { w in
            // A deadline 40 ms ahead with nothing to do: a timeout.
            let start = Monotonic.now()
            let first = w.waitForWork(until: start.adding(milliseconds: 40)) { work.withLock { $0 > 0 } }
            let waited = Monotonic.now().milliseconds(since: start)
            wakes.withLock { $0.append(first) }
            if waited < 40 { wakes.withLock { $0.append(.stop) } }  // a wrong early end shows in the list
            while true {
                let wake = w.waitForWork { work.withLock { $0 > 0 } }
                wakes.withLock { $0.append(wake) }
                if wake == .stop { return }
                work.withLock { $0 -= 1 }
            }
        }
        #expect(waitUntil(5) { wakes.withLock { $0.count } == 1 })
        work.withLock { $0 = 1 }
        worker.wake()
        #expect(waitUntil(5) { work.withLock { $0 } == 0 })
        #expect(!worker.hasEnded)
        #expect(worker.finish(timeoutMilliseconds: 5_000))
        #expect(worker.hasEnded && worker.isStopping)
        #expect(wakes.withLock { $0 } == [.timeout, .work, .stop])
    }

    @Test func workAskedBeforeFinishIsDoneFirst() {
        let worker = WorkerThread(name: "drain-worker")
        let work = Mutex(3), gate = Mutex(false)
        worker.start { w in
            while !gate.withLock({ $0 }) { usleep(1_000) }
            while w.waitForWork(until: nil, { work.withLock { $0 > 0 } }) == .work { work.withLock { $0 -= 1 } }
        }
        let finisher = Mutex<Bool?>(nil)
        OSThread.start(name: "finisher") { finisher.withLock { $0 = worker.finish(timeoutMilliseconds: 5_000) } }
        #expect(waitUntil(5) { worker.isStopping })
        gate.withLock { $0 = true }
        #expect(waitUntil(5) { finisher.withLock { $0 } != nil })
        #expect(finisher.withLock { $0 } == true)
        #expect(work.withLock { $0 } == 0, "the three pieces of work asked before finish were done")
    }

    @Test func finishOnTheWorkersOwnThreadDoesNotWaitForItself() {
        let worker = WorkerThread(name: "self-finish")
        let answer = Mutex<Bool?>(nil)
        worker.start { w in answer.withLock { $0 = w.finish(timeoutMilliseconds: nil) } }
        #expect(waitUntil(5) { answer.withLock { $0 } != nil })
        #expect(answer.withLock { $0 } == false, "not ended while it asks")
        #expect(waitUntil(5) { worker.hasEnded })
        #expect(worker.finish(timeoutMilliseconds: 0))
    }
}

/// `retryingEINTR`: the one place an interrupted call is tried again.
@Suite struct RetryingEINTRTests {
    @Test func anInterruptedCallIsTriedAgainAndOtherFailuresAreReturned() {
        var calls = 0
        let r = retryingEINTR { () -> Int in
            calls += 1
            if calls < 3 { errno = EINTR; return -1 }
            return 5
        }
        #expect(r == 5 && calls == 3)
        calls = 0
        let failed = retryingEINTR { () -> Int32 in
            calls += 1
            errno = EAGAIN
            return -1
        }
        #expect(failed == -1 && calls == 1 && errno == EAGAIN, "EAGAIN is a value, not retried")
    }
}
