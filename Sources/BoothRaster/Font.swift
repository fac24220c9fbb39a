import CFreeType

/// A font file could not be loaded or a glyph could not be rendered: the FreeType call and its error code.
public struct FontError: Error, Equatable, Sendable, CustomStringConvertible {
    /// The FreeType function, e.g. `"FT_New_Face"`.
    public var call: String
    /// FreeType's `FT_Error`.
    public var code: Int32
    /// The font file.
    public var path: String

    public var description: String { "\(call) on \(path): FreeType error \(code)" }
}

/// One face of a TrueType/OpenType font through FreeType (`FT_Init_FreeType`, `FT_New_Face`),
/// rendering text to 8-bit coverage masks (`FT_Load_Char` with `FT_LOAD_RENDER`, anti-aliased).
/// Rendered masks are cached by text and size, so unchanged text is not rasterized again each frame.
/// Not thread-safe (FreeType faces are not): use it on one thread.
public final class Font {
    public let path: String
    private let library: FT_Library
    private let face: FT_Face
    private var cache: [CacheKey: AlphaMask] = [:]
    private struct CacheKey: Hashable { var text: String; var pixelHeight: Int; var maxWidth: Int }

    /// Loads face 0 of `path`.
    /// - Throws: ``FontError`` for `FT_Init_FreeType` or `FT_New_Face` (missing or unreadable file).
    public init(path: String) throws(FontError) {
        self.path = path
        var lib: FT_Library?
        let rc = FT_Init_FreeType(&lib)
        guard rc == 0, let lib else { throw FontError(call: "FT_Init_FreeType", code: rc, path: path) }
        var f: FT_Face?
        let rc2 = FT_New_Face(lib, path, 0, &f)
        guard rc2 == 0, let f else {
            FT_Done_FreeType(lib)
            throw FontError(call: "FT_New_Face", code: rc2, path: path)
        }
        library = lib
        face = f
    }

    deinit {
        FT_Done_Face(face)
        FT_Done_FreeType(library)
    }

    /// `text` rendered at `pixelHeight` pixels per em (`FT_Set_Pixel_Sizes`), wrapped at spaces to
    /// lines of at most `maxWidth` pixels (a single word wider than that is kept whole) and each
    /// line centred. The mask is as tall as the lines (ascender to descender each) and as wide as
    /// the widest. Glyphs the font lacks render as its missing-glyph box.
    public func mask(_ text: String, pixelHeight: Int, maxWidth: Int = Int.max) -> AlphaMask {
        let key = CacheKey(text: text, pixelHeight: pixelHeight, maxWidth: maxWidth)
        if let hit = cache[key] { return hit }
        if cache.count > 64 { cache.removeAll() }
        let rendered = render(text, pixelHeight: max(1, pixelHeight), maxWidth: maxWidth)
        cache[key] = rendered
        return rendered
    }

    private func setSize(_ px: Int) -> (ascender: Int, lineHeight: Int) {
        FT_Set_Pixel_Sizes(face, 0, FT_UInt(px))
        let m = face.pointee.size.pointee.metrics
        let asc = Int(m.ascender >> 6), desc = Int(-m.descender >> 6)
        return (asc, max(px, asc + desc))
    }

    /// Width in pixels of `text` at the current size (sum of advances).
    private func width(of text: Substring) -> Int {
        var w = 0
        for scalar in text.unicodeScalars where FT_Load_Char(face, FT_ULong(scalar.value), FT_Int32(FT_LOAD_DEFAULT)) == 0 {
            w += Int(face.pointee.glyph.pointee.advance.x >> 6)
        }
        return w
    }

    private func render(_ text: String, pixelHeight: Int, maxWidth: Int) -> AlphaMask {
        let (ascender, lineHeight) = setSize(pixelHeight)
        // Wrap at spaces.
        var lines: [Substring] = []
        for paragraph in text.split(separator: "\n", omittingEmptySubsequences: false) {
            var current: Substring = ""
            for word in paragraph.split(separator: " ") {
                let candidate: Substring = current.isEmpty ? word : Substring(current + " " + word)
                if !current.isEmpty && width(of: candidate) > maxWidth {
                    lines.append(current)
                    current = word
                } else {
                    current = candidate
                }
            }
            lines.append(current)
        }
        let widths = lines.map { width(of: $0) }
        var mask = AlphaMask(width: max(1, widths.max() ?? 1), height: lineHeight * lines.count)
        for (i, line) in lines.enumerated() {
            var penX = (mask.width - widths[i]) / 2
            let baseline = i * lineHeight + ascender
            for scalar in line.unicodeScalars {
                guard FT_Load_Char(face, FT_ULong(scalar.value), FT_Int32(FT_LOAD_RENDER)) == 0 else { continue }
                let g = face.pointee.glyph.pointee
                blit(g.bitmap, into: &mask, x: penX + Int(g.bitmap_left), y: baseline - Int(g.bitmap_top))
                penX += Int(g.advance.x >> 6)
            }
        }
        return mask
    }

    private func blit(_ bitmap: FT_Bitmap, into mask: inout AlphaMask, x: Int, y: Int) {
        guard let buffer = bitmap.buffer, bitmap.pixel_mode == UInt8(FT_PIXEL_MODE_GRAY.rawValue) else { return }
        let rows = Int(bitmap.rows), cols = Int(bitmap.width), pitch = Int(bitmap.pitch)
        let mw = mask.width, mh = mask.height
        mask.alpha.withUnsafeMutableBufferPointer { m in
            for r in 0..<rows {
                let my = y + r
                guard my >= 0, my < mh else { continue }
                for c in 0..<cols {
                    let mx = x + c
                    guard mx >= 0, mx < mw else { continue }
                    let v = buffer[r * pitch + c]
                    if v > m[my * mw + mx] { m[my * mw + mx] = v }
                }
            }
        }
    }
}
