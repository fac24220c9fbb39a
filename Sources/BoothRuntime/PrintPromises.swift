import BoothCore
import BoothPorts
import Synchronization

/// The pictures whose print `print.mode` promises and whose save is still to come, by the machine's
/// id: the storage thread takes a picture's promise as it saves it and the printer journals the print
/// with the save (``Printer/noteSaved(captureID:path:promise:)``), so a kill after `saved` never loses
/// it. The loop promises at `print` (the review's picture) and, in auto mode, at `compose` (the
/// composed picture is saved before its review begins); a skip withdraws one, and a session that ends
/// without a review withdraws those of its pictures no `print` asked for.
final class PrintPromises: Sendable {
    private struct Entry {
        var source: String
        /// `picture.qr` when it was promised: the page's code is made from the saved file's URL.
        var corner: PictureQRSetting
        /// True once the machine's `print` asked for it; false for one promised at `compose` only.
        var requested: Bool
    }
    private let entries = Mutex<[UInt64: Entry]>([:])
    /// At most this many promises wait for their save (the oldest go first); a booth has one or two.
    static let limit = 32

    /// Picture `id` (`"session 12"`) is to be printed; `requested`: the machine's `print` asked for it.
    func promise(_ id: UInt64, source: String, corner: PictureQRSetting, requested: Bool) {
        entries.withLock { e in
            e[id] = Entry(source: source, corner: corner, requested: requested || e[id]?.requested == true)
            if e.count > PrintPromises.limit, let oldest = e.keys.min() { e[oldest] = nil }
        }
    }

    /// The promise of picture `id`, taken (the storage thread, as it saves the picture): what it is and
    /// the `picture.qr` corner its page's code goes in; nil: none.
    func take(_ id: UInt64) -> (source: String, corner: PictureQRSetting)? {
        entries.withLock { $0.removeValue(forKey: id).map { ($0.source, $0.corner) } }
    }

    /// Picture `id`'s print was skipped.
    func withdraw(_ id: UInt64) { _ = entries.withLock { $0.removeValue(forKey: id) } }

    /// The session ended without a review of its picture (cancelled, failed, the compose deadline
    /// passed): promises no `print` asked for are withdrawn.
    func withdrawUnrequested() { entries.withLock { $0 = $0.filter { $0.value.requested } } }
}
