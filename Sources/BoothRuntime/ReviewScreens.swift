import BoothClock
import BoothCore
import BoothPorts
import Dispatch
import FoundationEssentials
import Glibc
import Synchronization

// What the review and idle screens show: the picture with its print status and QR code, the idle
// screen's gallery and Wi-Fi codes, and a picture taken down leaving both.

extension BoothRuntime {
    /// The review on screen: its picture, print status and QR code link (kept under ``BoothRuntime/review``).
    struct ReviewOnScreen {
        var captureID: UInt64
        /// The session whose picture it is (the log names it so; the capture id is the machine's).
        var session: Int
        var jpeg: [UInt8]?
        var printStatus: String?
        /// The photo's URL for the QR code, once it is saved (``RuntimeOptions/pictureLink``).
        var link: String?
    }

    /// Shows `screen` on every display; a review with its capture and print status.
    func show(_ screen: Screen) {
        let printer = self.printer, displays = self.displays
        let gallery = state.withLock { $0.settings.gallery }
        review.withLock { r in
            guard case let .review(id) = screen else {
                let last = r?.link
                r = nil
                let now = clock.now()
                idleLink.withLock { kept in
                    switch screen {
                    case .idle: if let last { kept = (last, now) }
                    case .preview, .countdown, .capture, .betweenShots: kept = nil
                    case .review, .fault: break
                    }
                }
                var content = ScreenContent(screen)
                if case .idle = screen {
                    content.link = idleCode(gallery)
                    content.wifi = gallery.wifiCode
                }
                for d in displays { d.show(content) }
                return
            }
            let (held, session) = state.withLock { ($0.sessionJPEGs[id], $0.session) }
            let jpeg = held ?? captures.get(id)?.jpeg ?? printer.savedPhoto(captureID: id)
            let shown = ReviewOnScreen(captureID: id, session: session, jpeg: jpeg,
                                       printStatus: printer.reviewText(captureID: id), link: link(id, jpeg))
            r = shown
            for d in displays { d.show(ScreenContent(screen, picture: shown.jpeg, status: shown.printStatus, link: shown.link)) }
        }
    }

    /// The print worker's journal or the printer's health changed (print or control thread): when
    /// the review on screen now reads differently, it is shown again with the new text.
    func printStateChanged() {
        let printer = self.printer, displays = self.displays, log = self.log
        review.withLock { r in
            guard var shown = r else { return }
            let text = printer.reviewText(captureID: shown.captureID)
            guard text != shown.printStatus else { return }
            shown.printStatus = text
            r = shown
            log.info("review of session \(shown.session)'s picture: \(text ?? "no print status")")
            for d in displays { d.show(ScreenContent(.review(pictureID: shown.captureID), picture: shown.jpeg, status: text, link: shown.link)) }
        }
    }

    /// The idle screen's picture code while its `gallery.idle_code` time runs (nil after, or off).
    func idleCode(_ gallery: Settings.Gallery) -> String? {
        guard let limit = gallery.idleCodeMilliseconds else { return nil }
        let now = clock.now()
        return idleLink.withLock { kept in
            guard let k = kept else { return nil }
            guard now.milliseconds(since: k.since) < Double(limit) else { kept = nil; return nil }
            return k.link
        }
    }

    /// The main loop's tick: the idle screen's picture code taken off once its time is up.
    func expireIdleCode() {
        let gallery = state.withLock { $0.settings.gallery }
        guard idleLink.withLock({ $0 != nil }) else { return }
        let code = idleCode(gallery)
        if code == nil { review.withLock { _ in screens.reshowIdle(link: nil, wifi: gallery.wifiCode) } }
    }

    /// `photoboothctl gallery remove`: a picture taken down (its `token`) is no longer offered by
    /// the idle screen's code, nor by its review's when that is on screen: the review is drawn again
    /// at once without it (the picture and print status stay), and its code does not come back for
    /// the rest of the review. Safe from any thread.
    public func forgetIdleLink(token: String) {
        let gallery = state.withLock { $0.settings.gallery }
        let displays = self.displays
        review.withLock { r in
            takenDown.withLock { t in
                if t.count >= 64 { t.removeFirst() }
                t.append("/p/\(token)")
            }
            if var shown = r, let link = shown.link, link.hasSuffix("/p/\(token)") {
                shown.link = nil
                r = shown
                log.notice("gallery: the review's code of a picture taken down is gone")
                for d in displays { d.show(ScreenContent(.review(pictureID: shown.captureID), picture: shown.jpeg, status: shown.printStatus, link: nil)) }
            }
            let dropped = idleLink.withLock { kept -> Bool in
                guard let k = kept, k.link.hasSuffix("/p/\(token)") else { return false }
                kept = nil
                return true
            }
            if dropped {
                log.notice("gallery: the idle screen's code of a picture taken down is gone")
                screens.reshowIdle(link: nil, wifi: gallery.wifiCode)
            }
        }
    }

    /// The URL of the saved photo `id` whose bytes are `jpeg` (``RuntimeOptions/pictureLink``); nil
    /// before it is saved or without a gallery.
    func link(_ id: UInt64, _ jpeg: [UInt8]?) -> String? {
        guard let pictureLink = options.pictureLink, let jpeg, let path = savedPath(id) else { return nil }
        guard let link = pictureLink(path, jpeg.count) else { return nil }
        return takenDown.withLock { t in t.contains { link.hasSuffix($0) } } ? nil : link
    }

    /// Where `id` was saved, once its save is noted; nil before.
    func savedPath(_ id: UInt64) -> String? {
        state.withLock { s in s.savedPaths.last { $0.id == id }?.path }
    }

    /// `id` was saved: when it is the review on screen and has no code yet, shown again with its
    /// URL's QR code (a review can begin before its picture is on disk).
    func reviewSaved(_ id: UInt64) {
        guard options.pictureLink != nil else { return }
        let displays = self.displays
        review.withLock { r in
            guard var shown = r, shown.captureID == id, shown.link == nil, let link = link(id, shown.jpeg) else { return }
            shown.link = link
            r = shown
            for d in displays { d.show(ScreenContent(.review(pictureID: id), picture: shown.jpeg, status: shown.printStatus, link: link)) }
        }
    }
}
