import BoothCore
import BoothInput
import Testing

@Suite("A touch's position on the turned drawing")
struct TouchPositionTests {
    /// A 0...4095 panel; the touch near its top-right corner.
    private func at(_ rotation: Rotation) -> TouchPosition {
        TouchPosition(rawX: 4095, rawY: 0, xRange: 0...4095, yRange: 0...4095, rotation: rotation)
    }

    @Test("the panel's top-right corner is the drawing's top-right, top-left, bottom-left, bottom-right for 0, 90, 180, 270")
    func corners() {
        #expect(at(.r0) == TouchPosition(x: 1, y: 0))
        #expect(at(.r90) == TouchPosition(x: 0, y: 0), "drawing turned 90 clockwise: its top-left corner is at the panel's top-right")
        #expect(at(.r180) == TouchPosition(x: 0, y: 1))
        #expect(at(.r270) == TouchPosition(x: 1, y: 1))
    }

    @Test("a point off the centre: turned, scaled to the drawing's pixels; a range not from 0; clamped")
    func points() {
        let p = TouchPosition(rawX: 300, rawY: 100, xRange: 100...1100, yRange: 100...600, rotation: .r90)
        #expect(p == TouchPosition(x: 0, y: 0.8))
        let drawing = Rotation.r90.rotated(FrameSize(width: 1280, height: 800))  // 800x1280 portrait
        #expect(p.pixel(in: drawing) == (0, 1024))
        #expect(TouchPosition(rawX: 5000, rawY: -3, xRange: 0...4095, yRange: 0...4095, rotation: .r0) == TouchPosition(x: 1, y: 0))
        #expect(TouchPosition(x: 1, y: 1).pixel(in: FrameSize(width: 10, height: 5)) == (9, 4))
        #expect(TouchPosition(rawX: 7, rawY: 7, xRange: 7...7, yRange: 7...7, rotation: .r0) == TouchPosition(x: 0, y: 0))
        #expect("\(TouchPosition(x: 0.425, y: 0.07))" == "0.43,0.07")
    }
}
