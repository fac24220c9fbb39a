import BoothClock
import BoothCore
import BoothPorts
import Synchronization

// What the review and idle screens show: the picture with its print status and QR code, the idle
// screen's gallery and Wi-Fi codes, and a picture taken down leaving both.

/// The content of the review and idle screens, kept between the loop (which shows screens), the print
/// thread (a print status changed) and the control socket (a picture taken down). Every `show` to the
/// screens goes through here, under one lock, so a print status arriving from the print thread never
/// re-shows a review the loop has already left. What only the loop knows (the session's bytes, where a
/// picture was saved, the gallery settings) the runtime hands in with each call.
final class ReviewScreens: Sendable {
    /// The review on screen: its picture, print status and QR code link.
    struct Shown {
        var captureID: UInt64
        /// The session whose picture it is (the log names it so; the capture id is the machine's).
        var session: Int
        var jpeg: [UInt8]?
        var printStatus: String?
        /// The photo's URL for the QR code, once it is saved (``RuntimeOptions/pictureLink``).
        var link: String?
    }
    /// The review on screen (capture, its JPEG, the print status shown), nil on other screens.
    private let review = Mutex<Shown?>(nil)
    /// The last review's link and when the review left it, kept for the idle screen
    /// (`gallery.idle_code`) until the next session begins, its time is up or the picture is taken
    /// down; changed under ``review``'s lock.
    private let idleLink = Mutex<(link: String, since: MonotonicInstant)?>(nil)
    /// The last 64 pictures taken down while the daemon runs, as `/p/TOKEN`: never a review's code again.
    private let takenDown = Mutex<[String]>([])
    private let screens: ScreenSet
    private let printer: any Printer
    private let captures: CaptureBox
    private let clock: any MonotonicClock
    private let log: Logger
    private let pictureLink: (@Sendable (_ path: String, _ bytes: Int) -> String?)?

    /// - Parameters:
    ///   - screens: every screen, as one sink.
    ///   - printer: a review's print status (``Printer/reviewText(captureID:)``) and a saved picture's bytes.
    ///   - captures: a capture's bytes still held.
    ///   - pictureLink: ``RuntimeOptions/pictureLink``: nil, no QR code.
    init(screens: ScreenSet, printer: any Printer, captures: CaptureBox, clock: any MonotonicClock, log: Logger,
         pictureLink: (@Sendable (_ path: String, _ bytes: Int) -> String?)?) {
        self.screens = screens
        self.printer = printer
        self.captures = captures
        self.clock = clock
        self.log = log
        self.pictureLink = pictureLink
    }

    /// Whether a saved picture can have a QR code (a gallery gives URLs).
    var givesLinks: Bool { pictureLink != nil }

    /// Shows `screen` on every display; a review with its capture and print status.
    /// - Parameters:
    ///   - gallery: the settings in force (the idle screen's codes).
    ///   - session: the session under way; `held`: its bytes of the review's picture, if the loop holds them;
    ///     `savedPath`: where the review's picture was saved, nil before its save is noted.
    func show(_ screen: Screen, gallery: Settings.Gallery, session: Int, held: [UInt8]?, savedPath: String?) {
        let printer = self.printer, screens = self.screens
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
                screens.show(content)
                return
            }
            let jpeg = held ?? captures.get(id)?.jpeg ?? printer.savedPhoto(captureID: id)
            let shown = Shown(captureID: id, session: session, jpeg: jpeg,
                              printStatus: printer.reviewText(captureID: id), link: link(jpeg, savedPath: savedPath))
            r = shown
            screens.show(ScreenContent(screen, picture: shown.jpeg, status: shown.printStatus, link: shown.link))
        }
    }

    /// The print worker's journal or the printer's health changed (print or control thread): when
    /// the review on screen now reads differently, it is shown again with the new text.
    func printStateChanged() {
        let printer = self.printer, screens = self.screens, log = self.log
        review.withLock { r in
            guard var shown = r else { return }
            let text = printer.reviewText(captureID: shown.captureID)
            guard text != shown.printStatus else { return }
            shown.printStatus = text
            r = shown
            log.info("review of session \(shown.session)'s picture: \(text ?? "no print status")")
            screens.show(ScreenContent(.review(pictureID: shown.captureID), picture: shown.jpeg, status: text, link: shown.link))
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

    /// The idle screen shown again (if it is on the glass) with its codes as `gallery` says now (a reload).
    func reshowIdle(_ gallery: Settings.Gallery) {
        review.withLock { _ in screens.reshowIdle(link: idleCode(gallery), wifi: gallery.wifiCode) }
    }

    /// The main loop's tick: the idle screen's picture code taken off once its time is up.
    func expireIdleCode(_ gallery: Settings.Gallery) {
        guard idleLink.withLock({ $0 != nil }) else { return }
        let code = idleCode(gallery)
        if code == nil { review.withLock { _ in screens.reshowIdle(link: nil, wifi: gallery.wifiCode) } }
    }

    /// A picture taken down (its `token`) is no longer offered by the idle screen's code, nor by its
    /// review's when that is on screen: the review is drawn again at once without it (the picture and print
    /// status stay), and its code does not come back for the rest of the review. Safe from any thread.
    func forget(token: String, gallery: Settings.Gallery) {
        let screens = self.screens
        review.withLock { r in
            takenDown.withLock { t in
                if t.count >= 64 { t.removeFirst() }
                t.append("/p/\(token)")
            }
            if var shown = r, let link = shown.link, link.hasSuffix("/p/\(token)") {
                shown.link = nil
                r = shown
                log.notice("gallery: the review's code of a picture taken down is gone")
                screens.show(ScreenContent(.review(pictureID: shown.captureID), picture: shown.jpeg, status: shown.printStatus, link: nil))
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

    /// The URL of a saved photo whose bytes are `jpeg`, saved at `savedPath` (``RuntimeOptions/pictureLink``);
    /// nil before it is saved, without a gallery, or once taken down.
    func link(_ jpeg: [UInt8]?, savedPath: String?) -> String? {
        guard let pictureLink, let jpeg, let path = savedPath else { return nil }
        guard let link = pictureLink(path, jpeg.count) else { return nil }
        return takenDown.withLock { t in t.contains { link.hasSuffix($0) } } ? nil : link
    }

    /// Picture `id` was saved at `path`: when it is the review on screen and has no code yet, shown again
    /// with its URL's QR code (a review can begin before its picture is on disk).
    func saved(_ id: UInt64, path: String) {
        guard pictureLink != nil else { return }
        let screens = self.screens
        review.withLock { r in
            guard var shown = r, shown.captureID == id, shown.link == nil, let link = link(shown.jpeg, savedPath: path) else { return }
            shown.link = link
            r = shown
            screens.show(ScreenContent(.review(pictureID: id), picture: shown.jpeg, status: shown.printStatus, link: link))
        }
    }
}

extension BoothRuntime {
    /// Shows `screen` (the interpreter's ``BoothCommand/show(_:)``), with what the loop holds for a review.
    func show(_ screen: Screen) {
        var reviewed: UInt64?
        if case let .review(id) = screen { reviewed = id }
        let (gallery, session, held) = state.withLock { s in
            (s.settings.gallery, s.session, reviewed.flatMap { s.sessionJPEGs[$0] })
        }
        let path = reviewed.flatMap(savedPath)
        reviewScreens.show(screen, gallery: gallery, session: session, held: held, savedPath: path)
    }

    /// The main loop's tick: the idle screen's picture code taken off once its time is up.
    func expireIdleCode() {
        reviewScreens.expireIdleCode(state.withLock { $0.settings.gallery })
    }

    /// `photoboothctl gallery remove`: a picture taken down (its `token`) is no longer offered by
    /// the idle screen's code, nor by its review's when that is on screen: the review is drawn again
    /// at once without it (the picture and print status stay), and its code does not come back for
    /// the rest of the review. Safe from any thread.
    public func forgetIdleLink(token: String) {
        reviewScreens.forget(token: token, gallery: state.withLock { $0.settings.gallery })
    }

    /// The URL of the saved photo `id` whose bytes are `jpeg` (``RuntimeOptions/pictureLink``); nil
    /// before it is saved or without a gallery.
    func link(_ id: UInt64, _ jpeg: [UInt8]?) -> String? {
        reviewScreens.link(jpeg, savedPath: savedPath(id))
    }

    /// Where `id` was saved, once its save is noted; nil before.
    func savedPath(_ id: UInt64) -> String? {
        state.withLock { s in s.savedPaths.last { $0.id == id }?.path }
    }
}
