import BoothSystem
import CFramebufferShims
import Glibc

/// The kiosk's virtual terminal, owned while the booth draws: switched to graphics mode
/// (`KDSETMODE KD_GRAPHICS`) so the text console and its cursor never draw over the framebuffer,
/// its blanking timer turned off (`ESC [9;0]`, `setterm -blank 0`) and the screen unblanked
/// (`ESC [13]`), and put back in the mode it had on ``restore()`` (also on deinit).
public final class ConsoleOwner {
    public let path: String
    private let fd: Int32
    private let previousMode: Int32
    private var restored = false

    /// Opens `path` (e.g. `/dev/tty1`) and switches it to graphics mode.
    /// - Throws: ``FramebufferError/call(_:errno:device:)`` for `open`, `KDGETMODE` or `KDSETMODE`
    ///   (ENOTTY: not a VT; EPERM: not allowed to change it).
    public init(path: String) throws(FramebufferError) {
        self.path = path
        let fd = open(path, O_RDWR | O_NOCTTY | O_CLOEXEC)
        guard fd >= 0 else { throw .last("open", path) }
        var mode: Int32 = 0
        guard cfb_kd_get_mode(fd, &mode) == 0 else { let e = FramebufferError.last("KDGETMODE", path); close(fd); throw e }
        // While the VT is still in text mode: no blanking timer, unblank now, hide the cursor.
        try? writeAll(Array("\u{1B}[9;0]\u{1B}[13]\u{1B}[?25l".utf8), to: fd, subject: path)
        guard cfb_kd_set_mode(fd, cfb_kd_graphics()) == 0 else {
            let e = FramebufferError.last("KDSETMODE", path); close(fd); throw e
        }
        self.fd = fd
        previousMode = mode
    }

    /// Puts the VT back in the mode it had (text, normally) and shows the cursor. Safe to call twice.
    public func restore() {
        guard !restored else { return }
        restored = true
        _ = cfb_kd_set_mode(fd, previousMode)
        if previousMode == cfb_kd_text() {
            try? writeAll(Array("\u{1B}[?25h".utf8), to: fd, subject: path)
        }
        close(fd)
    }

    deinit { restore() }
}
