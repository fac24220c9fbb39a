// BoothCore: the pure core of the booth: no I/O, no threads, no C library.
//
// Owns the state machine (Machine/: states, events, commands, the transition table), the settings
// (Settings/: schema, parser, diagnostics, reload rules, defaults, media sizes), frames and their sizes
// and formats, and the monotonic clock as a protocol (MonotonicClock, ManualClock for tests).
//
// May import: the system only (today Synchronization): no Glibc calls, no Foundation. Every other module
// builds on it.
