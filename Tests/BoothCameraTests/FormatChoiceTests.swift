import BoothCore
import Testing
@testable import BoothCamera

private let s640 = FrameSize(width: 640, height: 480)
private let s1280 = FrameSize(width: 1280, height: 720)
private let s1920 = FrameSize(width: 1920, height: 1080)
private let i30 = FrameInterval(numerator: 1, denominator: 30)
private let i15 = FrameInterval(numerator: 1, denominator: 15)

private func offer(_ f: PixelFormat, _ sizes: [FrameSize], emulated: Bool = false,
                   intervals: [FrameInterval] = [i30, i15]) -> FormatOffer {
    FormatOffer(fourcc: f.fourcc, isEmulated: emulated, sizes: .discrete(sizes),
                intervals: Dictionary(uniqueKeysWithValues: sizes.map { ($0, FrameIntervalOffer.discrete(intervals)) }))
}

@Suite struct FormatChoiceTests {
    @Test func autoPrefersMJPEGOverYUYV() throws {
        let choice = try FormatChooser.choose(offers: [offer(.yuyv, [s640, s1280]), offer(.mjpeg, [s640, s1280])],
                                              preference: .auto, size: s1280, framesPerSecond: 30)
        #expect(choice.format == .mjpeg)
        #expect(choice.size == s1280)
        #expect(choice.interval == i30)
        #expect(choice.warnings.isEmpty)
    }

    @Test func autoTakesYUYVWhenOnlyItOffersTheExactSize() throws {
        let choice = try FormatChooser.choose(offers: [offer(.mjpeg, [s640]), offer(.yuyv, [s640, s1280])],
                                              preference: .auto, size: s1280, framesPerSecond: 30)
        #expect(choice.format == .yuyv)
        #expect(choice.size == s1280)
    }

    @Test func autoFallsBackToLibv4l2RGB24() throws {
        let bayer = FormatOffer(fourcc: PixelFormat.fourcc("BA81"), sizes: .discrete([s640]))
        let choice = try FormatChooser.choose(offers: [bayer, offer(.rgb24, [s640], emulated: true)],
                                              preference: .auto, size: s640, framesPerSecond: 30)
        #expect(choice.format == .rgb24)
    }

    @Test func emulatedYUYVIsNotUsedAsNative() throws {
        let choice = try FormatChooser.choose(offers: [offer(.yuyv, [s640], emulated: true), offer(.rgb24, [s640], emulated: true)],
                                              preference: .yuyv, size: s640, framesPerSecond: 30)
        #expect(choice.format == .rgb24)
        #expect(choice.warnings.contains { $0.contains("yuyv") && $0.contains("rgb24") })
    }

    @Test func noUsableFormatThrowsListingOffers() {
        let bayer = FormatOffer(fourcc: PixelFormat.fourcc("BA81"), sizes: .discrete([s640]))
        #expect(throws: FormatChoiceError.noUsableFormat(offered: ["BA81"])) {
            try FormatChooser.choose(offers: [bayer], preference: .auto, size: s640, framesPerSecond: 30)
        }
    }

    @Test func explicitPreferenceWinsEvenWhenMJPEGExists() throws {
        let choice = try FormatChooser.choose(offers: [offer(.mjpeg, [s1280]), offer(.yuyv, [s1280])],
                                              preference: .yuyv, size: s1280, framesPerSecond: 30)
        #expect(choice.format == .yuyv)
        #expect(choice.warnings.isEmpty)
    }

    @Test func explicitPreferenceNotOfferedWarnsAndFallsBack() throws {
        let choice = try FormatChooser.choose(offers: [offer(.yuyv, [s640])], preference: .mjpeg,
                                              size: s640, framesPerSecond: 30)
        #expect(choice.format == .yuyv)
        #expect(choice.warnings == ["camera.format mjpeg is not offered by the camera; using yuyv"])
    }

    @Test func sizeNotOfferedUsesNearestAndWarnsNamingBoth() throws {
        let choice = try FormatChooser.choose(offers: [offer(.mjpeg, [s640, FrameSize(width: 1024, height: 768), s1920])],
                                              preference: .auto, size: s1280, framesPerSecond: 30)
        #expect(choice.size == FrameSize(width: 1024, height: 768))
        #expect(choice.warnings.count == 1)
        #expect(choice.warnings.first?.contains("1280x720") == true)
        #expect(choice.warnings.first?.contains("1024x768") == true)
    }

    @Test(arguments: [
        // (requested, offered, expected)
        (FrameSize(width: 1280, height: 720), [FrameSize(width: 1280, height: 960), FrameSize(width: 1920, height: 1080)], FrameSize(width: 1280, height: 960)),
        (FrameSize(width: 4000, height: 3000), [FrameSize(width: 640, height: 480), FrameSize(width: 1920, height: 1080)], FrameSize(width: 1920, height: 1080)),
        (FrameSize(width: 100, height: 100), [FrameSize(width: 640, height: 480), FrameSize(width: 320, height: 240)], FrameSize(width: 320, height: 240)),
    ])
    func nearestDiscreteSize(requested: FrameSize, offered: [FrameSize], expected: FrameSize) {
        #expect(FrameSizeOffer.discrete(offered).nearest(to: requested) == expected)
    }

    @Test func stepwiseSizesSnapToStepsWithinRange() {
        let offer = FrameSizeOffer.stepwise(min: FrameSize(width: 64, height: 64), max: FrameSize(width: 1920, height: 1080),
                                            stepWidth: 16, stepHeight: 8)
        #expect(offer.nearest(to: FrameSize(width: 1000, height: 701)) == FrameSize(width: 1008, height: 704))
        #expect(offer.nearest(to: FrameSize(width: 4000, height: 4000)) == FrameSize(width: 1920, height: 1080))
        #expect(offer.nearest(to: FrameSize(width: 10, height: 10)) == FrameSize(width: 64, height: 64))
        #expect(offer.offers(FrameSize(width: 1280, height: 720)))
        #expect(!offer.offers(FrameSize(width: 1281, height: 720)))
    }

    @Test func continuousSizesClamp() throws {
        let offers = [FormatOffer(fourcc: PixelFormat.yuyv.fourcc,
                                  sizes: .continuous(min: FrameSize(width: 16, height: 16), max: FrameSize(width: 1280, height: 720)))]
        let exact = try FormatChooser.choose(offers: offers, preference: .auto, size: FrameSize(width: 999, height: 555), framesPerSecond: 30)
        #expect(exact.size == FrameSize(width: 999, height: 555))
        #expect(exact.warnings.isEmpty)
        let big = try FormatChooser.choose(offers: offers, preference: .auto, size: s1920, framesPerSecond: 30)
        #expect(big.size == s1280)
        #expect(big.warnings.count == 1)
    }

    @Test func frameRateNotOfferedUsesNearestWithWarning() throws {
        let choice = try FormatChooser.choose(offers: [offer(.mjpeg, [s1280], intervals: [i30, i15])],
                                              preference: .auto, size: s1280, framesPerSecond: 20)
        #expect(choice.interval == i15)
        #expect(choice.warnings == ["20 fps is not offered for MJPG 1280x720; using 15 fps"])
    }

    @Test func intervalsComeFromTheLookupWhenGiven() throws {
        let offers = [FormatOffer(fourcc: PixelFormat.yuyv.fourcc,
                                  sizes: .stepwise(min: s640, max: s1920, stepWidth: 2, stepHeight: 2))]
        var asked: [FrameSize] = []
        let choice = try FormatChooser.choose(offers: offers, preference: .auto, size: s1280, framesPerSecond: 60) { _, size in
            asked.append(size)
            return .continuous(min: FrameInterval(numerator: 1, denominator: 30), max: FrameInterval(numerator: 1, denominator: 1))
        }
        #expect(asked == [s1280])
        #expect(choice.interval == i30)  // 60 fps is faster than the fastest (30)
        #expect(choice.warnings.count == 1)
    }

    @Test func frameIntervalFromFramesPerSecond() {
        #expect(FrameInterval(framesPerSecond: 30) == i30)
        let ntsc = FrameInterval(framesPerSecond: 29.97)
        #expect(ntsc == FrameInterval(numerator: 100, denominator: 2997))
        #expect(abs(ntsc.framesPerSecond - 29.97) < 1e-9)
    }
}
