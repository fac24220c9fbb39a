import BoothCore
import Testing

@Suite struct RotationTests {
    /// What is left of a turn after a camera did part of it, for every pair: the part done and the rest
    /// together are the whole turn, and nothing is left when the camera did all of it.
    @Test func remainingAfterATurnDone() {
        for whole in Rotation.allCases {
            for done in Rotation.allCases {
                let left = whole.remaining(after: done)
                #expect((done.rawValue + left.rawValue) % 360 == whole.rawValue, "\(whole) after \(done): \(left)")
            }
            #expect(whole.remaining(after: whole) == .r0)
            #expect(whole.remaining(after: .r0) == whole)
        }
        #expect(Rotation.r90.remaining(after: .r180) == .r270)
        #expect(Rotation.r0.remaining(after: .r180) == .r180)
    }
}
