import BoothCore
import BoothJPEG
import Testing

@Suite struct MarkerTests {
    static func sample(width: Int = 320, height: Int = 240) throws -> [UInt8] {
        try DecoderTests.sample(width: width, height: height)
    }

    @Test func listsSegmentsUpToTheFirstScan() throws {
        let jpeg = try Self.sample()
        let segments = try JPEGMarkers.segments(jpeg)
        // TurboJPEG writes APP0 (JFIF), two DQT, SOF0, four DHT, SOS.
        #expect(segments.map(\.marker) == [0xE0, 0xDB, 0xDB, 0xC0, 0xC4, 0xC4, 0xC4, 0xC4, 0xDA])
        #expect(segments.first?.offset == 2)
        for (a, b) in zip(segments, segments.dropFirst()) { #expect(a.range.upperBound == b.offset) }
        // SOF0 payload: precision 8, height, width, 3 components.
        let sof = try #require(segments.first { $0.marker == 0xC0 })
        let p = Array(jpeg[sof.payload])
        #expect(p[0] == 8 && Int(p[1]) << 8 | Int(p[2]) == 240 && Int(p[3]) << 8 | Int(p[4]) == 320 && p[5] == 3)
        #expect(JPEGMarkers.startsWithSOI(jpeg) && JPEGMarkers.endsWithEOI(jpeg))
        #expect(try JPEGMarkers.hasHuffmanTables(jpeg))
    }

    @Test func skipsFillBytesBeforeMarkers() throws {
        let jpeg = try Self.sample()
        let segments = try JPEGMarkers.segments(jpeg)
        let sof = try #require(segments.first { $0.marker == 0xC0 })
        var filled = jpeg
        filled.insert(contentsOf: [0xFF, 0xFF, 0xFF], at: sof.offset)
        let refilled = try JPEGMarkers.segments(filled)
        #expect(refilled.map(\.marker) == segments.map(\.marker))
        #expect(try #require(refilled.first { $0.marker == 0xC0 }).offset == sof.offset + 3)
    }

    @Test func standardTablesAreTheOnesLibjpegWrites() throws {
        // TurboJPEG encodes with the Annex K.3 tables, one DHT segment per table: their payloads,
        // concatenated, are the payload of our single segment.
        let jpeg = try Self.sample()
        let written = try JPEGMarkers.segments(jpeg).filter { $0.marker == JPEGMarkers.dht }
            .flatMap { jpeg[$0.payload] }
        let ours = JPEGMarkers.standardHuffmanTablesSegment
        #expect(ours.count == 420)
        #expect(Array(ours.prefix(4)) == [0xFF, 0xC4, 0x01, 0xA2])
        #expect(Array(ours.dropFirst(4)) == written)
    }

    @Test func insertingTablesIntoAStrippedImageDecodesIdentically() throws {
        let original = try Self.sample()
        let stripped = try strippingHuffmanTables(original)
        #expect(stripped.count == original.count - 4 * 4 - 416)

        // Without DHT the markers still parse...
        #expect(try JPEGMarkers.segments(stripped).map(\.marker) == [0xE0, 0xDB, 0xDB, 0xC0, 0xDA])
        #expect(try !JPEGMarkers.hasHuffmanTables(stripped))
        // ...and libjpeg-turbo itself decodes it (it falls back to the K.3 tables for MJPEG),
        // identically; other decoders need the DHT, hence the insertion.
        let decoder = try JPEGDecoder()
        let reference = try decoder.decodeRGB(original)
        #expect(decoder.validate(stripped))
        #expect(try decoder.decodeRGB(stripped) == reference)

        let fixed = try JPEGMarkers.insertingStandardHuffmanTables(stripped)
        #expect(try JPEGMarkers.hasHuffmanTables(fixed))
        #expect(fixed.count == stripped.count + 420)
        // One DHT between SOF0 and SOS; the entropy-coded data is untouched.
        let segments = try JPEGMarkers.segments(fixed)
        #expect(segments.map(\.marker) == [0xE0, 0xDB, 0xDB, 0xC0, 0xC4, 0xDA])
        let sos = try #require(segments.last)
        let originalSOS = try #require(try JPEGMarkers.segments(original).last)
        #expect(Array(fixed[sos.offset...]) == Array(original[originalSOS.offset...]))
        #expect(Array(fixed[..<segments[4].offset]) == Array(stripped[..<segments[4].offset]))
        #expect(decoder.validate(fixed))
        #expect(try decoder.decodeRGB(fixed) == reference)
    }

    @Test func imagesWithTablesAreReturnedUnchanged() throws {
        let jpeg = try Self.sample()
        #expect(try JPEGMarkers.insertingStandardHuffmanTables(jpeg) == jpeg)
        let fixed = try JPEGMarkers.insertingStandardHuffmanTables(try strippingHuffmanTables(jpeg))
        #expect(try JPEGMarkers.insertingStandardHuffmanTables(fixed) == fixed)
    }

    @Test func nonSequentialFramesAreNotGivenDefaultTables() throws {
        // A progressive frame (SOF2) without DHT: returned as it is.
        var jpeg = try strippingHuffmanTables(try Self.sample())
        let sof = try #require(try JPEGMarkers.segments(jpeg).first { $0.marker == 0xC0 })
        jpeg[sof.offset + 1] = 0xC2
        #expect(try JPEGMarkers.insertingStandardHuffmanTables(jpeg) == jpeg)
    }

    @Test func markerErrorsAreThrownNotTrapped() throws {
        #expect(throws: JPEGMarkerError.missingStartOfImage) { try JPEGMarkers.segments([]) }
        #expect(throws: JPEGMarkerError.missingStartOfImage) { try JPEGMarkers.segments([0xFF]) }
        #expect(throws: JPEGMarkerError.missingStartOfImage) { try JPEGMarkers.segments([0x89, 0x50, 0x4E, 0x47]) }
        #expect(throws: JPEGMarkerError.missingStartOfScan) { try JPEGMarkers.segments([0xFF, 0xD8]) }
        #expect(throws: JPEGMarkerError.truncated(offset: 2)) { try JPEGMarkers.segments([0xFF, 0xD8, 0xFF]) }
        #expect(throws: JPEGMarkerError.truncated(offset: 2)) { try JPEGMarkers.segments([0xFF, 0xD8, 0xFF, 0xFF, 0xFF]) }
        #expect(throws: JPEGMarkerError.truncated(offset: 2)) { try JPEGMarkers.segments([0xFF, 0xD8, 0xFF, 0xE0, 0x00]) }
        #expect(throws: JPEGMarkerError.truncated(offset: 2)) {
            try JPEGMarkers.segments([0xFF, 0xD8, 0xFF, 0xE0, 0xFF, 0xFF, 0x00])
        }
        #expect(throws: JPEGMarkerError.invalidLength(offset: 2, length: 1)) {
            try JPEGMarkers.segments([0xFF, 0xD8, 0xFF, 0xE0, 0x00, 0x01])
        }
        #expect(throws: JPEGMarkerError.expectedMarker(offset: 2, found: 0x12)) {
            try JPEGMarkers.segments([0xFF, 0xD8, 0x12, 0x34])
        }
        #expect(throws: JPEGMarkerError.unexpectedMarker(offset: 2, marker: 0xD9)) {
            try JPEGMarkers.segments([0xFF, 0xD8, 0xFF, 0xD9])
        }
        #expect(throws: JPEGMarkerError.unexpectedMarker(offset: 2, marker: 0xD8)) {
            try JPEGMarkers.segments([0xFF, 0xD8, 0xFF, 0xD8])
        }
        #expect(throws: JPEGMarkerError.missingStartOfFrame) {
            try JPEGMarkers.insertingStandardHuffmanTables([0xFF, 0xD8, 0xFF, 0xDA, 0x00, 0x02])
        }
        #expect(!JPEGMarkers.startsWithSOI([]) && !JPEGMarkers.endsWithEOI([]))
        #expect(!JPEGMarkers.endsWithEOI([0xD9]) && !JPEGMarkers.endsWithEOI([0, 0, 0]))
        #expect(JPEGMarkers.endsWithEOI([0xFF, 0xD9, 0, 0]) && !JPEGMarkers.endsWithEOI([0xFF, 0xD9, 1]))
    }

    @Test func everyPrefixOfAnImageIsHandled() throws {
        let jpeg = try strippingHuffmanTables(try Self.sample(width: 32, height: 16))
        let headerEnd = try #require(try JPEGMarkers.segments(jpeg).last).range.upperBound
        for n in 0...jpeg.count {
            let prefix = Array(jpeg.prefix(n))
            let parsed = try? JPEGMarkers.segments(prefix)
            // The markers parse exactly when the prefix holds the whole SOS header.
            #expect((parsed != nil) == (n >= headerEnd), "prefix \(n)")
            if let inserted = try? JPEGMarkers.insertingStandardHuffmanTables(prefix) {
                #expect(inserted.count == prefix.count + 420)
            }
        }
    }

    @Test func mutatedImagesNeverTrap() throws {
        let original = try Self.sample(width: 48, height: 32)
        let stripped = try strippingHuffmanTables(original)
        let decoder = try JPEGDecoder()
        var state: UInt64 = 0x9E37_79B9_7F4A_7C15
        func next() -> Int {
            state = state &* 6_364_136_223_846_793_005 &+ 1_442_695_040_888_963_407
            return Int(truncatingIfNeeded: state >> 33)
        }
        var parsed = 0, valid = 0
        for round in 0..<1500 {
            var bytes = round.isMultiple(of: 2) ? original : stripped
            let headerBytes = 700  // aim most mutations at the marker segments
            for _ in 0..<(1 + next() % 4) {
                let i = next() % min(bytes.count, headerBytes)
                switch next() % 4 {
                case 0: bytes[i] = UInt8(truncatingIfNeeded: next())
                case 1: bytes[i] = 0xFF
                case 2: bytes.remove(at: i)
                default: bytes.insert(UInt8(truncatingIfNeeded: next()), at: i)
                }
            }
            if let out = try? JPEGMarkers.insertingStandardHuffmanTables(bytes) {
                parsed += 1
                #expect(out == bytes || out.count == bytes.count + 420)
            }
            if decoder.validate(bytes) { valid += 1 }
            _ = try? decoder.header(bytes)
        }
        // Sanity: the mutations are not all fatal, nor all harmless.
        #expect(parsed > 0 && parsed < 1500, "parsed \(parsed)")
        #expect(valid < 1500, "valid \(valid)")
    }
}
