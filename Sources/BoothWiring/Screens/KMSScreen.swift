import BoothControl
import BoothCore
import BoothDeviceListing
import BoothDisplay
import BoothPorts
import Glibc
import Synchronization

extension ScreenKind {
    static let kmsName = "kms"

    /// A DRM/KMS card (libdrm, dumb buffers, page flips on vblank): `display.device` under `/dev/dri/`;
    /// `auto`'s first choice is a card with a connected screen, then (after a plain `/dev/fb0`) a card
    /// whose screen may be plugged in later. A card that is missing or has no connected screen is
    /// waited for (``waitForScreen(_:_:_:_:_:)``). `devices` lists the cards (``DeviceReport/drmCardsSection``).
    public static let kms = ScreenKind.kms()

    /// ``kms`` with the machine's cards and their probe replaced (tests).
    static func kms(cards: @escaping @Sendable () -> [String] = { KMSFramebuffer.cards() },
                    probe: @escaping @Sendable (String) -> Result<KMSCardInfo, FramebufferError> = probeKMSCard) -> ScreenKind {
        ScreenKind(name: kmsName,
                   role: .device(claims: { $0.hasPrefix("/dev/dri/") }, detect: { detectKMSCards(cards(), probe: probe) }),
                   make: makeKMSScreen, devices: DeviceReport.drmCardsSection)
    }
}

/// The card `path` asked for its connectors (``KMSFramebuffer/probe(_:)``), as a result.
@Sendable func probeKMSCard(_ path: String) -> Result<KMSCardInfo, FramebufferError> {
    Result { () throws(FramebufferError) in try KMSFramebuffer.probe(path) }
}

/// `auto`'s candidates among `cards`: the first with a connected connector (``ScreenCandidate/connected``,
/// the others not asked), else the first with connectors (``ScreenCandidate/later``); `seen` says what
/// each card is, or that there is none.
func detectKMSCards(_ cards: [String], probe: (String) -> Result<KMSCardInfo, FramebufferError>) -> ScreenDetection {
    var seen: [String] = [], unplugged: String?
    for card in cards {
        let info: KMSCardInfo
        switch probe(card) {
        case .success(let i): info = i
        // The shim's sentence names the card and the errno's words already.
        case .failure(.call(let why, _, _)): seen.append(why); continue
        case .failure(let e): seen.append("\(card): \(e)"); continue
        }
        if info.connected > 0 { return ScreenDetection(candidates: [ScreenCandidate(device: card, preference: ScreenCandidate.connected)], seen: "") }
        if info.connectors > 0 && unplugged == nil { unplugged = card }
        seen.append("\(card) (\(info.driver)): no connected screen among \(info.connectors) connectors")
    }
    return ScreenDetection(candidates: unplugged.map { [ScreenCandidate(device: $0, preference: ScreenCandidate.later)] } ?? [],
                           seen: seen.isEmpty ? "no /dev/dri/card*" : seen.joined(separator: "; "))
}

/// The KMS card's screen for a request: opened now, or a ``PendingScreen`` waiting for it (a card not
/// there yet, no connected screen); under `simulate` only a card whose DRM master nobody holds, nothing waited for.
@Sendable func makeKMSScreen(_ r: ScreenRequest) -> [any DisplaySink] {
    let path = r.device, s = r.settings, clock = r.clock, log = r.log, orientation = r.orientation
    if access(path, F_OK) != 0 {
        if r.simulate { return [] }
        // A typo, or a driver that has not made its card yet (probe order, a USB display): said now,
        // with the cards there are, and waited for as a card without a screen is.
        let cards = KMSFramebuffer.cards()
        log.warning("display: \(path): no such device (DRM cards here: \(cards.isEmpty ? "none" : cards.joined(separator: ", "))); "
                    + "looking again every 5 s. display.device = auto picks the card with a connected screen")
        return [waitForScreen(path, s, clock, log, orientation)]
    }
    do {
        return try kmsDisplay(path, s, clock, log, orientation, simulate: r.simulate).map { [$0] } ?? []
    } catch FramebufferError.call(let why, let code, _) where code == ENOLINK && !r.simulate {
        // No screen plugged in (or switched off): wait for one, as an operator plugs the HDMI cable in late.
        log.warning("display: \(why); looking again every 5 s")
        return [waitForScreen(path, s, clock, log, orientation)]
    } catch {
        log.warning("display: no screen, running without it: \(error)")
        return []
    }
}

/// The KMS card `path` as a started display; nil under `simulate` when another client holds DRM master.
/// - Throws: ``FramebufferError`` from ``KMSFramebuffer/init(path:mode:retryMilliseconds:now:log:info:)``
///   (ENOLINK: no connected screen), the font's error.
func kmsDisplay(_ path: String, _ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                _ orientation: any OrientationSource, simulate: Bool) throws -> (any DisplaySink)? {
    let kms = try KMSFramebuffer(path: path, now: { clock.now() }, log: { log.warning($0) }, info: { log.info($0) })
    if simulate && !kms.currentStats.isMaster { kms.close(); return nil }
    let i = kms.info
    let described = "\(path) (\(i.driver), KMS) \(i.connector ?? "?") \(kms.format.size)@\(i.refreshHz ?? 0) Hz, "
        + "page flips on vblank\(kms.currentStats.isMaster ? "" : "; not DRM master yet")"
    do {
        return try startScreen(kms, described: described, s, clock, log, orientation)
    } catch {
        kms.close()
        throw error
    }
}

/// A ``PendingScreen`` for the KMS card `path` while it is missing or none of its connectors is
/// connected: every 5 s it asks the card (``KMSFramebuffer/probe(_:)``) and opens the screen once one is.
func waitForScreen(_ path: String, _ s: Settings, _ clock: any MonotonicClock, _ log: Logger,
                   _ orientation: any OrientationSource) -> any DisplaySink {
    let lastWarning = Mutex<String?>(nil)
    let pending = PendingScreen { () -> (any DisplaySink)? in
        guard let info = try? KMSFramebuffer.probe(path), info.connected > 0 else { return nil }
        do {
            let display = try kmsDisplay(path, s, clock, log, orientation, simulate: false)
            log.notice("display: \(path): \(info.connector ?? "a connector") connected")
            return display
        } catch {
            // Said once while it stays the same (every 5 s otherwise).
            let sentence = "display: \(path): \(info.connector ?? "a connector") connected, but: \(error); looking again every 5 s"
            if lastWarning.withLock({ l in defer { l = sentence }; return l != sentence }) { log.warning(sentence) }
            return nil
        }
    }
    if !pending.start() { log.warning("display: no thread to wait for a screen on \(path) (pthread_create failed); running without it") }
    return pending
}
