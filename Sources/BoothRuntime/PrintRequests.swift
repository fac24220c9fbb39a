import BoothCore
import BoothPorts
import Synchronization

// Print requests with their QR code: asked by the machine, held until the picture's save gives its code,
// skipped by a long press, or printed without a code when the save failed.

/// The runtime's print requests: each of the machine's print commands becomes a request to the printer
/// port, with the picture's QR code (`picture.qr`) once its save gives it a URL. Keeps which prints wait
/// for their picture's save and which saves failed. Called on the loop's thread; what only the loop
/// knows (the session, the settings, the bytes it holds, where a picture was saved) comes with each call.
final class PrintRequests: Sendable {
    /// What the loop knows of a picture when a print is asked for.
    struct Picture {
        /// The session under way (the print's source, `session N`).
        var session: Int
        /// The settings in force (`print.mode`, `button.long_press`, `picture.qr`).
        var settings: Settings
        /// The picture's bytes, when the loop still holds them.
        var held: [UInt8]?
        /// Where the picture was saved, nil before its save is noted.
        var savedPath: String?
    }
    private struct State {
        /// Prints that wait for their picture's save to carry its URL's QR code (`picture.qr`).
        var awaitingCode: Set<UInt64> = []
        /// Of those, the ones printed without the code as their save failed: their later `printSaved` is not a second print.
        var printedWithoutCode: Set<UInt64> = []
        /// Captures and pictures whose save failed (the latest 32): a print asked for later does not wait for a code.
        var failedSaves: [UInt64] = []
    }
    private let state = Mutex(State())
    private let printer: any Printer
    /// `print.mode` promises for pictures not saved yet, journaled with their save.
    private let promises: PrintPromises
    private let captures: CaptureBox
    private let screens: ReviewScreens
    private let log: Logger

    /// - Parameter screens: the saved picture's URL (``ReviewScreens/link(_:savedPath:)``), as the review shows it.
    init(printer: any Printer, promises: PrintPromises, captures: CaptureBox, screens: ReviewScreens, log: Logger) {
        self.printer = printer
        self.promises = promises
        self.captures = captures
        self.screens = screens
        self.log = log
    }

    /// How long a print request waits before it may be submitted: in press mode `button.long_press`,
    /// since a press in review is also the start of a long press (which skips), so a long press never prints.
    static func grace(_ settings: Settings) -> Int {
        settings.print.mode == .press ? settings.button.longPressMilliseconds : 0
    }

    /// The QR code the print of a saved picture (bytes `jpeg`) carries (`picture.qr`); nil without one.
    private func pageCode(_ jpeg: [UInt8], _ p: Picture) -> PageCode? {
        let corner = p.settings.picture.qr
        guard corner != .off, let url = screens.link(jpeg, savedPath: p.savedPath) else { return nil }
        return PageCode(text: url, corner: corner)
    }

    /// ``BoothCommand/print(pictureID:)``: promises and journals the print, then prints now (with the
    /// picture's QR code when it is saved).
    /// - Returns: true when the print waits for the picture's save: the loop then hands the machine
    ///   ``BoothEvent/printWaitsForSave(pictureID:)``.
    func request(_ id: UInt64, _ p: Picture) -> Bool {
        let session = p.session, grace = PrintRequests.grace(p.settings)
        promises.promise(id, source: "session \(session)", corner: p.settings.picture.qr, requested: true)
        let wantsCode = screens.givesLinks && p.settings.picture.qr != .off
        if wantsCode, p.savedPath == nil, !state.withLock({ $0.failedSaves.contains(id) }) {
            // The code carries the saved file's token: printed once the save is noted (`printSaved`).
            state.withLock { _ = $0.awaitingCode.insert(id) }
            log.debug("print of the picture of session \(session): waiting for its save, for its QR code (picture.qr)")
            return true
        } else if let jpeg = p.held ?? captures.get(id)?.jpeg ?? printer.savedPhoto(captureID: id) {
            printer.request(jpeg: jpeg, captureID: id, source: "session \(session)", graceMilliseconds: grace,
                            code: pageCode(jpeg, p))
            return false
        } else {
            // Saved just now: the storage thread let the bytes go and its `.saved` is on its way
            // (a failed save keeps them in memory). The machine prints it when that event arrives.
            log.debug("print of the picture of session \(session): waiting for its save to be noted")
            return true
        }
    }

    /// ``BoothCommand/printSaved(pictureID:path:)``: the print that waited for picture `id`'s save, from its file at `path`.
    func saved(_ id: UInt64, path: String, _ p: Picture) {
        let session = p.session, grace = PrintRequests.grace(p.settings)
        let printedAlready = state.withLock { s in
            s.awaitingCode.remove(id)
            return s.printedWithoutCode.remove(id) != nil
        }
        if printedAlready {
            log.debug("print of the picture of session \(session): printed without its code when its save failed; saved now at \(path)")
        } else if let jpeg = printer.savedPhoto(captureID: id) {
            printer.request(jpeg: jpeg, captureID: id, source: "session \(session)", graceMilliseconds: grace,
                            code: pageCode(jpeg, p))
        } else {
            log.error("print of the picture of session \(session): \(path) cannot be read back; not printed")
        }
    }

    /// ``BoothCommand/skipPrint(pictureID:)``: the guest's long press in review; nothing of `id` is printed.
    func skip(_ id: UInt64) {
        promises.withdraw(id)
        state.withLock { _ = $0.awaitingCode.remove(id) }
        printer.skip(captureID: id)
    }

    /// Picture `id`'s save failed (``BoothEvent/saveFailed``): a print waiting for its code is not kept from
    /// the guest by a full disk, it is printed now without it.
    func saveFailed(_ id: UInt64, _ p: Picture) {
        let session = p.session, grace = PrintRequests.grace(p.settings)
        let (waited, held) = state.withLock { s in
            s.failedSaves.append(id)
            if s.failedSaves.count > 32 { s.failedSaves.removeFirst(s.failedSaves.count - 32) }
            let waited = s.awaitingCode.remove(id) != nil
            let held = p.held ?? captures.get(id)?.jpeg
            if waited && held != nil { s.printedWithoutCode.insert(id) }
            return (waited, held)
        }
        if waited, let held {
            log.warning("print of the picture of session \(session): its save failed, so it has no URL; printed without its QR code")
            printer.request(jpeg: held, captureID: id, source: "session \(session)", graceMilliseconds: grace, code: nil)
        } else if waited {
            log.error("print of the picture of session \(session): its save failed and its bytes are gone; printed if a later save succeeds")
        }
    }
}

extension BoothRuntime {
    /// What the loop knows of picture `id` for a print (``PrintRequests/Picture``).
    func printPicture(_ id: UInt64) -> PrintRequests.Picture {
        let (session, settings, held) = state.withLock { ($0.session, $0.settings, $0.sessionJPEGs[id]) }
        return PrintRequests.Picture(session: session, settings: settings, held: held, savedPath: savedPath(id))
    }
}
