// BoothClock: time and threads, for everyone: no device, no C library but the system shims.
//
// Owns the one reading of CLOCK_MONOTONIC (Monotonic, SystemClock), the condition variable whose
// deadlines are on it (MonotonicCondition), the threads the booth owns for blocking calls (OSThread),
// the one worker-thread helper (WorkerThread, WorkQueue), the one EINTR retry (retryingEINTR) and
// whether the wall clock is synchronised (ClockSync).
//
// May import: BoothCore, CSysShims and the system.
