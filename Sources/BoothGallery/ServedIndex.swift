import BoothClock
import BoothCore
import BoothIndex
import BoothPorts
import Glibc
import Synchronization

/// The index photobooth-gallery serves from, which may not be there yet: a gallery started before
/// photoboothd made it listens all the same and answers 503 with `Retry-After` (``current()`` throws)
/// until the file can be opened, looked for at most once a second. Once open it is an ``IndexFile``:
/// opened again when the daemon made the file again (deleted or damaged); meanwhile the open file is
/// read, so guests get what it has.
final class ServedIndex: Sendable {
    /// `gallery.index`.
    let path: String
    private struct Waiting: Sendable { var lookedAt: Int64?; var told: String? }
    private let file: Mutex<IndexFile?>
    private let waiting = Mutex(Waiting())
    private let log: Logger
    private let now: @Sendable () -> Int64

    /// An index already open.
    init(opened index: PictureIndex, log: Logger, nowMilliseconds: @escaping @Sendable () -> Int64) {
        path = index.path
        file = Mutex(IndexFile(index, log: log, nowMilliseconds: nowMilliseconds))
        self.log = log
        now = nowMilliseconds
    }

    /// The index at `path`, opened (read-only) when it is there and has this program's schema, else at a later ``current()``.
    init(path: String, log: Logger, nowMilliseconds: @escaping @Sendable () -> Int64) {
        self.path = path
        self.log = log
        now = nowMilliseconds
        file = Mutex(nil)
        _ = try? current()
    }

    /// True once the index was opened (a not-ready answer is no fault to log).
    var isOpen: Bool { file.withLock { $0 != nil } }

    /// The index to read now.
    /// - Throws: ``IndexError`` (`.open`, `.newerSchema`) while the file is not there or not usable:
    ///   the caller answers 503 with `Retry-After`. Logged once while it lasts.
    func current() throws(IndexError) -> PictureIndex {
        try currentAndGeneration().index
    }

    /// ``current()`` with the open file's generation (counted up each time the daemon's file was opened
    /// again), for caches kept per file (the thumbnails' sweep).
    /// - Throws: as ``current()``.
    func currentAndGeneration() throws(IndexError) -> (index: PictureIndex, generation: Int) {
        if let f = file.withLock({ $0 }) { return f.currentAndGeneration() }
        let t = now()
        let why = waiting.withLock { w -> IndexError? in
            if let at = w.lookedAt, t - at < 1000 { return IndexError(.open, w.told ?? "index \(path): not made yet") }
            w.lookedAt = t
            do throws(IndexError) {
                let index = try PictureIndex(path: path, readOnly: true)
                file.withLock { $0 = IndexFile(index, log: log, nowMilliseconds: now) }
                if w.told != nil { log.notice("gallery: \(path) is there now (photoboothd made it): serving from it") }
                w.told = nil
                return nil
            } catch {
                if w.told != error.message {
                    log.warning("gallery: \(error); waiting for photoboothd to make it (gallery.enabled there too; looking every second), "
                                + "answering 503 with Retry-After meanwhile")
                    w.told = error.message
                }
                return error
            }
        }
        if let why { throw why }
        if let f = file.withLock({ $0 }) { return f.currentAndGeneration() }
        throw IndexError(.open, "index \(path): not made yet")
    }
}

extension GalleryServer {
    /// A server reading `index` (``start(address:port:maxConnections:connectionsPerClient:timeoutMilliseconds:threads:)`` to listen).
    /// - Parameters:
    ///   - guessLimit: unknown tokens allowed per client address and window (429 beyond).
    ///   - nowMilliseconds: the limit's clock (CLOCK_MONOTONIC; tests inject theirs).
    ///   - wallSeconds: the expiry's clock, seconds since 1970 (the index's `saved_at`; tests inject theirs).
    ///   - pinLimit: wrong PINs allowed per client address and window (429 beyond).
    public convenience init(config: Config, index: PictureIndex, log: Logger, guessLimit: GuessLimit = GuessLimit(),
                            pinLimit: GuessLimit = GuessLimit(allowed: 5),
                            nowMilliseconds: @escaping @Sendable () -> Int64 = { Int64(Monotonic.now().nanoseconds / 1_000_000) },
                            wallSeconds: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }) {
        self.init(config: config, served: ServedIndex(opened: index, log: log, nowMilliseconds: nowMilliseconds), log: log,
                  guessLimit: guessLimit, pinLimit: pinLimit, nowMilliseconds: nowMilliseconds, wallSeconds: wallSeconds)
    }

    /// A server reading the index at `indexPath` (`gallery.index`) once photoboothd has made it: until
    /// then it listens and answers every page, picture and `/health` 503 with `Retry-After: 5`, and
    /// opens the file as soon as it is there (looked for at most once a second). Parameters as above.
    public convenience init(config: Config, indexPath: String, log: Logger, guessLimit: GuessLimit = GuessLimit(),
                            pinLimit: GuessLimit = GuessLimit(allowed: 5),
                            nowMilliseconds: @escaping @Sendable () -> Int64 = { Int64(Monotonic.now().nanoseconds / 1_000_000) },
                            wallSeconds: @escaping @Sendable () -> Int64 = { Int64(time(nil)) }) {
        self.init(config: config, served: ServedIndex(path: indexPath, log: log, nowMilliseconds: nowMilliseconds), log: log,
                  guessLimit: guessLimit, pinLimit: pinLimit, nowMilliseconds: nowMilliseconds, wallSeconds: wallSeconds)
    }
}
