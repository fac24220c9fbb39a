import BoothPorts
import BoothStorage
import BoothSystem
import CSodium
import Glibc
import Synchronization

/// Each photos folder's own id, kept in it (`.photobooth-id`: 32 hex digits, made once with
/// `randombytes_buf` and written atomically): part of every photo's identity, so a folder emptied
/// or a stick swapped, whose session numbers start again at 1, never gives a new photo the URL of
/// an earlier one, while a rebuild of the index from the folder gives the same URLs again.
/// Cached per folder; safe from any thread.
public final class StorageIDs: Sendable {
    public static let fileName = ".photobooth-id"
    private let cache = Mutex<[String: String]>([:])
    /// Folders whose id could not be had, warned about once.
    private let warned = Mutex<Set<String>>([])
    private let log: Logger

    public init(log: Logger) { self.log = log }

    /// The id of the photos folder `dir`, made when missing; "" when it can be neither read nor made
    /// (logged once per folder, and tried again next time), and "" without a word for a folder not
    /// there yet (a fresh start: it gets its id with its first photo).
    public func id(of dir: String) -> String {
        // Read-or-make under the lock: the review's link (main thread) and the picture sink's thread
        // ask for a new folder's id at the same moment, and must get the same one.
        let (id, problem) = cache.withLock { cache -> (String, String?) in
            if let known = cache[dir] { return (known, nil) }
            let path = "\(dir)/\(StorageIDs.fileName)"
            if let bytes = try? AtomicFile.read(path) {
                guard bytes.count == 32, bytes.allSatisfy({ (48...57).contains($0) || (97...102).contains($0) }) else {
                    return ("", "gallery: \(path) is not a folder id (32 hex digits); left as it is, the photos' URLs in \(dir) carry none")
                }
                let id = String(decoding: bytes, as: UTF8.self)
                cache[dir] = id
                return (id, nil)
            }
            guard access(path, F_OK) != 0 && errno == ENOENT else {
                return ("", "gallery: \(path) cannot be read (\(SystemCallError.reason(of: errno))); the photos' URLs in \(dir) carry no folder id until it can")
            }
            // No folder yet (a fresh start): nothing to warn about; it gets its id with its first photo.
            if access(dir, F_OK) != 0 && errno == ENOENT { return ("", nil) }
            var raw = [UInt8](repeating: 0, count: 16)
            randombytes_buf(&raw, raw.count)
            let made = raw.map { ($0 < 16 ? "0" : "") + String($0, radix: 16) }.joined()
            do {
                try AtomicFile.write(Array(made.utf8), to: path)
            } catch {
                return ("", "gallery: \(path): \(error); the photos' URLs in \(dir) carry no folder id until it can be made")
            }
            cache[dir] = made
            return (made, nil)
        }
        if let problem { warnOnce(dir, problem) }
        return id
    }

    private func warnOnce(_ dir: String, _ sentence: String) {
        if warned.withLock({ $0.insert(dir).inserted }) { log.warning(sentence) }
    }

    /// The photos folder of a saved photo: two levels up (`DIR/DATE/name`).
    public static func photosDir(of path: String) -> String { directoryName(of: directoryName(of: path)) }
}
