/// The tests' synthetic picture (BoothJPEGTests' `Pattern.rgb`, BoothLayoutTests' `Fixture.patternRGB`): one copy.
public enum TestPattern {
    /// An RGB24 pattern, `width` × `height`: red ramps left→right, green top→bottom, blue in a 16-pixel
    /// checkerboard (aligned with 4:2:0 MCUs), tinted by `seed` (0: no tint). Lines are `bytesPerLine` bytes
    /// (at least `width * 3`; nil: `width * 3`), their padding bytes `pad`.
    public static func rgb(width: Int, height: Int, seed: Int = 0, bytesPerLine: Int? = nil, pad: UInt8 = 0) -> [UInt8] {
        let bpl = bytesPerLine ?? width * 3
        var out = [UInt8](repeating: pad, count: bpl * height)
        for y in 0..<height {
            for x in 0..<width {
                let i = y * bpl + x * 3
                let checker = (x / 16 + y / 16) % 2 == 0
                out[i] = UInt8((x * 255 / max(1, width - 1) + seed * 60) % 256)
                out[i + 1] = UInt8((y * 255 / max(1, height - 1) + seed * 90) % 256)
                out[i + 2] = checker ? UInt8(40 + seed * 30) : 200
            }
        }
        return out
    }
}
