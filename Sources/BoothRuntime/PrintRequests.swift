import BoothClock
import BoothCore
import BoothPorts
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

// Print requests with their QR code: asked by the machine, held until the picture's save gives its code,
// skipped by a long press, or printed without a code when the save failed.

extension BoothRuntime {
    /// How long a print request waits before it may be submitted: in press mode `button.long_press`,
    /// since a press in review is also the start of a long press (which skips), so a long press never prints.
    func printGrace(_ settings: Settings) -> Int {
        settings.print.mode == .press ? settings.button.longPressMilliseconds : 0
    }

    /// Whether prints carry their picture's QR code: `picture.qr` set and the gallery giving URLs.
    func wantsCode() -> Bool {
        options.pictureLink != nil && state.withLock { $0.settings.picture.qr } != .off
    }

    /// The QR code the print of saved picture `id` (bytes `jpeg`) carries (`picture.qr`); nil without one.
    func pageCode(_ id: UInt64, _ jpeg: [UInt8]) -> PageCode? {
        let corner = state.withLock { $0.settings.picture.qr }
        guard corner != .off, let url = link(id, jpeg) else { return nil }
        return PageCode(text: url, corner: corner)
    }

    /// ``BoothCommand/print(pictureID:)``: promises and journals the print, then prints now (with the
    /// picture's QR code when it is saved), or waits for the save (``BoothEvent/printWaitsForSave(pictureID:)``).
    func requestPrint(_ id: UInt64) {
        let (session, grace, held, corner) = state.withLock {
            ($0.session, printGrace($0.settings), $0.sessionJPEGs[id], $0.settings.picture.qr)
        }
        printPromises.promise(id, source: "session \(session)", corner: corner, requested: true)
        if wantsCode(), savedPath(id) == nil, !state.withLock({ $0.failedSaves.contains(id) }) {
            // The code carries the saved file's token: printed once the save is noted (`printSaved`).
            state.withLock { _ = $0.printsAwaitingCode.insert(id) }
            log.debug("print of the picture of session \(session): waiting for its save, for its QR code (picture.qr)")
            dispatch(.printWaitsForSave(pictureID: id))
        } else if let jpeg = held ?? captures.get(id)?.jpeg ?? printer.savedPhoto(captureID: id) {
            printer.request(jpeg: jpeg, captureID: id, source: "session \(session)", graceMilliseconds: grace,
                            code: pageCode(id, jpeg))
        } else {
            // Saved just now: the storage thread let the bytes go and its `.saved` is on its way
            // (a failed save keeps them in memory). The machine prints it when that event arrives.
            log.debug("print of the picture of session \(session): waiting for its save to be noted")
            dispatch(.printWaitsForSave(pictureID: id))
        }
    }

    /// ``BoothCommand/printSaved(pictureID:path:)``: the print that waited for picture `id`'s save, from its file.
    func printSaved(_ id: UInt64, path: String) {
        let (session, grace, printedAlready) = state.withLock { s in
            s.printsAwaitingCode.remove(id)
            return (s.session, printGrace(s.settings), s.printedWithoutCode.remove(id) != nil)
        }
        if printedAlready {
            log.debug("print of the picture of session \(session): printed without its code when its save failed; saved now at \(path)")
        } else if let jpeg = printer.savedPhoto(captureID: id) {
            printer.request(jpeg: jpeg, captureID: id, source: "session \(session)", graceMilliseconds: grace,
                            code: pageCode(id, jpeg))
        } else {
            log.error("print of the picture of session \(session): \(path) cannot be read back; not printed")
        }
    }

    /// ``BoothCommand/skipPrint(pictureID:)``: the guest's long press in review; nothing of `id` is printed.
    func skipPrint(_ id: UInt64) {
        printPromises.withdraw(id)
        state.withLock { _ = $0.printsAwaitingCode.remove(id) }
        printer.skip(captureID: id)
    }

    /// Picture `id`'s save failed (``BoothEvent/saveFailed``): a print waiting for its code is not kept from
    /// the guest by a full disk, it is printed now without it.
    func printWithoutCode(afterFailedSaveOf id: UInt64) {
        // A print waiting for its code is not kept from the guest by a full disk: printed now, without it.
        let (waited, held, session, grace) = state.withLock { s in
            s.failedSaves.append(id)
            if s.failedSaves.count > 32 { s.failedSaves.removeFirst(s.failedSaves.count - 32) }
            let waited = s.printsAwaitingCode.remove(id) != nil
            let held = s.sessionJPEGs[id] ?? captures.get(id)?.jpeg
            if waited && held != nil { s.printedWithoutCode.insert(id) }
            return (waited, held, s.session, printGrace(s.settings))
        }
        if waited, let held {
            log.warning("print of the picture of session \(session): its save failed, so it has no URL; printed without its QR code")
            printer.request(jpeg: held, captureID: id, source: "session \(session)", graceMilliseconds: grace, code: nil)
        } else if waited {
            log.error("print of the picture of session \(session): its save failed and its bytes are gone; printed if a later save succeeds")
        }
    }
}
