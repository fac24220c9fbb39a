// BoothClock: time and threads, for everyone: no device, no C library but the system shims.
//
// Owns the one reading of CLOCK_MONOTONIC (Monotonic, SystemClock), the condition variable whose
// deadlines are on it (MonotonicCondition), the threads the booth owns for blocking calls (OSThread),
// the one worker-thread helper (WorkerThread, WorkQueue) and whether the wall clock is synchronised
// (ClockSync). The EINTR retry (retryingEINTR) and listDirectory are BoothSystem's.
//
// May import: BoothCore, BoothSystem, CSysShims and the system.
