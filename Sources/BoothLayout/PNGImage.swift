import BoothCore
import CPNG

/// A PNG read through libpng's simplified API (`png_image_begin_read_from_file`,
/// `png_image_finish_read`), converted to B, G, R, A bytes per pixel (libyuv's "ARGB" order),
/// alpha not premultiplied, `size.width * 4` bytes per row.
struct BGRAImage {
    var size: FrameSize
    var bytes: [UInt8]

    /// Reads `path`. Throws `PictureError.png` with libpng's message for a missing, unreadable or
    /// broken file, or one over 40 MP.
    init(path: String) throws(PictureError) {
        var image = png_image()
        image.version = UInt32(PNG_IMAGE_VERSION)
        guard png_image_begin_read_from_file(&image, path) != 0 else {
            let message = BGRAImage.message(&image)
            png_image_free(&image)
            throw PictureError.png(path: path, message: message)
        }
        let width = Int(image.width), height = Int(image.height)
        guard width > 0, height > 0, width * height <= 40_000_000 else {
            png_image_free(&image)
            throw PictureError.png(path: path, message: "image \(width)x\(height) is empty or over 40 MP")
        }
        image.format = UInt32(cpng_format_bgra)
        var bytes = [UInt8](repeating: 0, count: width * height * 4)
        let ok = bytes.withUnsafeMutableBytes { buf in
            png_image_finish_read(&image, nil, buf.baseAddress, Int32(width * 4), nil)
        }
        guard ok != 0 else {
            let message = BGRAImage.message(&image)
            png_image_free(&image)
            throw PictureError.png(path: path, message: message)
        }
        size = FrameSize(width: width, height: height)
        self.bytes = bytes
    }

    private static func message(_ image: inout png_image) -> String {
        String(cArray: image.message)
    }
}
