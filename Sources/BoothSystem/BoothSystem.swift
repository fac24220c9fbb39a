// BoothSystem: the one door to system calls every module shares. SystemCallError (a failed call: its
// name, errno with its symbolic name, the subject), the one EINTR retry, the one write-all loop, an owning
// FileDescriptor, AtomicFile (durable writes: temp + fsync + rename + fsync(dir)), the file system's kind,
// and the one strftime wrapper (TimeText). The bottom of the module graph: it imports no Booth module.
//
// May import: Glibc, Synchronization, FoundationEssentials (JSONEncoder), CSysShims.
