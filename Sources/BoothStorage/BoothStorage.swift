// BoothStorage: the storage port's side (BoothPorts/Storage.swift).
//
// Owns the photos directory (PhotoStore: date folders, session numbers that never repeat, a new
// storage.dir at runtime), the removable-media guard (StorageGuard) and the totals across restarts
// (StatsStore). Durable atomic files (AtomicFile: temp, fsync, rename, fsync the folder) are BoothSystem's.
//
// May import: BoothCore, BoothSystem, BoothPorts, BoothClock (its writer thread), CSysShims. Not the
// runtime, no device module. The runtime sees it only as `PhotoStorage` and `StatsRecording`; it is made
// in photoboothd/DeviceFactories.swift.
