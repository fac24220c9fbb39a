import BoothCore
import BoothPorts
import Synchronization

/// The screens in use (framebuffer, file preview, a test's recorder) as one ``DisplaySink``, so a
/// reload can close them and put screens made for new settings in their place while the camera
/// thread keeps delivering frames and the loop keeps showing screens. It remembers the last screen
/// shown and shows it on the new screens at once, so a new `text.*` or `display.*` is on the glass
/// without waiting for the next state change. Thread-safe: every call holds one lock (the sinks'
/// `show` and `frame` only hand data to their own threads).
final class ScreenSet: DisplaySink {
    private struct State {
        var sinks: [any DisplaySink]
        /// The settings the sinks were made with (`display.*`, `preview.*`, `text.*`, `camera.rotation`).
        var settings: Settings
        var last: ScreenContent?
    }
    private let state: Mutex<State>

    init(_ sinks: [any DisplaySink], settings: Settings) { state = Mutex(State(sinks: sinks, settings: settings)) }

    /// How many screens are in use.
    var count: Int { state.withLock { $0.sinks.count } }

    /// The settings the screens in use were made with.
    var settings: Settings { state.withLock { $0.settings } }

    func show(_ content: ScreenContent) {
        state.withLock { s in
            s.last = content
            for d in s.sinks { d.show(content) }
        }
    }

    /// When the last screen shown is the idle screen: shown again with `link` and `wifi` as its
    /// codes (a code expired or taken down, the Wi-Fi settings reloaded). Nothing otherwise.
    func reshowIdle(link: String?, wifi: String?) {
        state.withLock { s in
            guard var content = s.last, case .idle = content.screen, content.link != link || content.wifi != wifi else { return }
            content.link = link
            content.wifi = wifi
            s.last = content
            for d in s.sinks { d.show(content) }
        }
    }

    func frame(_ frame: Frame) {
        state.withLock { s in for d in s.sinks { d.frame(frame) } }
    }

    func close() {
        let old = state.withLock { s in defer { s.sinks = [] }; return s.sinks }
        for d in old { d.close() }
    }

    /// Closes the screens in use (each gives its device back: the framebuffer, the console), then
    /// makes the new ones with `make` and shows them the last screen shown.
    /// - Returns: how many screens are in use now.
    @discardableResult
    func replace(settings: Settings, _ make: () -> [any DisplaySink]) -> Int {
        close()
        let made = make()
        return state.withLock { s in
            s.sinks = made
            s.settings = settings
            if let last = s.last {
                for d in made { d.show(last) }
            }
            return made.count
        }
    }
}
