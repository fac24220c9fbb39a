// BoothQRCode: a QR code's modules from libqrencode, drawn by the review screen (BoothDisplay) and on
// the printed page (BoothPrint).
//
// May import: CQREncode and the system.

import CQREncode

/// A QR code's modules, from libqrencode (`QRcode_encodeString`, error correction level M, 8-bit
/// mode, the smallest version that holds the text): `size` x `size` modules, row by row, true for a
/// dark one. The quiet zone (4 modules of light around it) is the drawer's.
public struct QRCode: Sendable, Equatable {
    public let size: Int
    public let modules: [Bool]

    /// nil when the text does not fit a QR code (over about 2,300 bytes at level M) or libqrencode fails.
    public init?(_ text: String) {
        guard !text.isEmpty, let code = QRcode_encodeString(text, 0, QR_ECLEVEL_M, QR_MODE_8, 1) else { return nil }
        defer { QRcode_free(code) }
        let width = Int(code.pointee.width)
        guard width > 0, let data = code.pointee.data else { return nil }
        size = width
        modules = (0..<width * width).map { data[$0] & 1 != 0 }
    }

    /// Whether the module at column `x`, row `y` is dark.
    public func isDark(x: Int, y: Int) -> Bool { modules[y * size + x] }
}
