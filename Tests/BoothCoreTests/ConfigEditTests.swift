import Testing
@testable import BoothCore

@Suite struct ConfigEditTests {
    /// A hand-written file: odd spacing, comments of both kinds, CR-free, a key set twice in different sections.
    let original = """
        ; my booth
        [camera]
        # the webcam by the door
        device   =   /dev/video2
        frame_rate=25

        [session]
        countdown = 5s   
        ; review stays default

        [storage]
        dir = /srv/photos

        """

    func lines(_ s: String) -> [Substring] { s.split(separator: "\n", omittingEmptySubsequences: false) }

    @Test func replacingAValueLeavesEveryOtherByteIdentical() throws {
        let edit = try Settings.edit(text: original, file: "f.conf", key: "camera.frame_rate", value: " 30 ").get()
        let before = lines(original), after = lines(edit.text)
        #expect(after.count == before.count)
        for i in before.indices where i != 4 { #expect(after[i] == before[i], "line \(i + 1) changed") }
        #expect(after[4] == "frame_rate=30")
        #expect(edit.line == 5)
        #expect(edit.previous == "25")
        #expect(Settings.parse(text: edit.text, file: "f.conf").map(\.camera.frameRate) == .success(30))
    }

    @Test func spacingAroundTheValueIsKept() throws {
        let edit = try Settings.edit(text: original, file: "f.conf", key: "camera.device", value: "/dev/video0").get()
        #expect(lines(edit.text)[3] == "device   =   /dev/video0")
        // The trailing blanks after 5s are not part of the value and stay.
        let edit2 = try Settings.edit(text: original, file: "f.conf", key: "session.countdown", value: "3s").get()
        #expect(lines(edit2.text)[7] == "countdown = 3s   ")
    }

    @Test func aCommentAfterTheValueIsKeptAndAValueWithHashIsQuoted() throws {
        let text = "[button]\nline = GPIO17          # the line name\n"
        let edit = try Settings.edit(text: text, file: "f.conf", key: "button.line", value: "GPIO27").get()
        #expect(edit.text == "[button]\nline = GPIO27          # the line name\n")
        #expect(edit.previous == "GPIO17")
        let footer = try Settings.edit(text: text, file: "f.conf", key: "picture.footer_top", value: "Party #1").get()
        #expect(footer.value == "\"Party #1\"")
        #expect(Settings.parse(text: footer.text, file: "f.conf").map(\.picture.footerTop) == .success("Party #1"))
        let hash = try Settings.edit(text: text, file: "f.conf", key: "picture.footer_top", value: "# 1").get()
        #expect(hash.value == "\"# 1\"")
        #expect(Settings.parse(text: hash.text, file: "f.conf").map(\.picture.footerTop) == .success("# 1"))
        // A colour is no comment, and needs no quotes.
        let colour = try Settings.edit(text: text, file: "f.conf", key: "picture.background", value: "#ff0000").get()
        #expect(colour.value == "#ff0000")
        #expect(Settings.parse(text: colour.text, file: "f.conf").map(\.picture.background) == .success(RGBColor(red: 255, green: 0, blue: 0)))
        #expect(Settings.edit(text: text, file: "f.conf", key: "picture.footer_top", value: "say \"hi\" #1")
                == .failure(.invalidValue("picture.footer_top: a value with '#' after a space is written in double quotes, and then cannot itself contain '\"'")))
    }

    /// A value in quotes at both ends whose first quote closes before a ` #` (`"Party" #1 "Fun"`) was written bare and
    /// read back as `Party`, while config set said it set the whole value: it reads back as set, or is refused.
    @Test func aQuotedValueWithACommentInsideReadsBackAsSet() {
        let text = "[picture]\nfooter_top = x\n"
        let value = "\"Party\" #1 \"Fun\""
        switch Settings.edit(text: text, file: "f.conf", key: "picture.footer_top", value: value) {
        case let .success(edit):
            #expect(Settings.parse(text: edit.text, file: "f.conf").map(\.picture.footerTop) == .success("Party\" #1 \"Fun"),
                    "config set said \(edit.value)")
        case let .failure(error):
            #expect(error == .invalidValue("picture.footer_top: a value with '#' after a space is written in double quotes, and then cannot itself contain '\"'"))
        }
    }

    /// An empty value with a comment after it (`footer_top =    # none yet`): its value range was the empty range at
    /// the `#`, so the new value was written against it (`Hello# none yet`), and the `#` no longer started a comment.
    @Test func anEmptyValueBeforeACommentIsReplacedKeepingTheComment() throws {
        let text = "[picture]\nfooter_top =    # none yet\n"
        let edit = try Settings.edit(text: text, file: "f.conf", key: "picture.footer_top", value: "Hello").get()
        #expect(Settings.parse(text: edit.text, file: "f.conf").map(\.picture.footerTop) == .success("Hello"), "\(edit.text)")
        #expect(edit.text.contains("# none yet"), "the comment kept: \(edit.text)")
        let source = Settings.edit(text: "[button]\nsource =    # or: gpio\n", file: "f.conf", key: "button.source", value: "input")
        #expect(source.map { Settings.parse(text: $0.text, file: "f.conf").map(\.button.sources) } == .success(.success([.input])),
                "\(source)")
    }

    @Test func aMissingKeyIsAddedAtTheEndOfItsSection() throws {
        let edit = try Settings.edit(text: original, file: "f.conf", key: "session.review", value: "8s").get()
        let after = lines(edit.text)
        #expect(after[8] == "review = 8s", "right after the section's last entry, before its trailing comment")
        #expect(edit.previous == nil)
        var expected = lines(original)
        expected.insert("review = 8s", at: 8)
        #expect(after == expected)
    }

    @Test func aMissingSectionIsAppended() throws {
        let edit = try Settings.edit(text: original, file: "f.conf", key: "button.line", value: "27").get()
        #expect(edit.text == original + "\n[button]\nline = 27\n")
    }

    @Test func crlfFilesStayCRLF() throws {
        let text = "[camera]\r\nframe_rate = 25\r\n"
        let edit = try Settings.edit(text: text, file: "f.conf", key: "camera.frame_rate", value: "30").get()
        #expect(edit.text == "[camera]\r\nframe_rate = 30\r\n")
        let added = try Settings.edit(text: text, file: "f.conf", key: "camera.format", value: "yuyv").get()
        #expect(added.text == "[camera]\r\nframe_rate = 25\r\nformat = yuyv\r\n")
    }

    @Test func aBadValueIsRefusedNamingTheKeyAndWhatIsAllowed() {
        guard case let .failure(.invalidValue(message)) = Settings.edit(text: original, file: "f.conf", key: "camera.frame_rate", value: "500") else {
            Issue.record("expected invalidValue"); return
        }
        #expect(message.hasPrefix("camera.frame_rate: '500' is out of range"))
        #expect(message.contains("1 to 120"))
        guard case .failure(.invalidValue) = Settings.edit(text: original, file: "f.conf", key: "button.active_low", value: "ture") else {
            Issue.record("expected invalidValue for a misspelt boolean"); return
        }
        guard case .failure(.invalidValue) = Settings.edit(text: original, file: "f.conf", key: "camera.device", value: "a\nb") else {
            Issue.record("a line break cannot go into a value"); return
        }
    }

    @Test func anUnknownKeyGetsTheClosestName() {
        let result = Settings.edit(text: original, file: "f.conf", key: "button.debunce", value: "20ms")
        #expect(result == .failure(.unknownKey("button.debunce", suggestion: "button.debounce")))
    }

    @Test func anEditThatLeavesTheFileInvalidWritesNothingAndListsEveryError() {
        let broken = original + "[sesion]\nreview = 5s\n[camera]\nfps = 3\n"
        guard case let .failure(.invalidFile(error)) = Settings.edit(text: broken, file: "f.conf", key: "camera.frame_rate", value: "30") else {
            Issue.record("expected invalidFile"); return
        }
        #expect(error.diagnostics.map(\.line) == [13, 16])
        #expect(error.description.contains("f.conf:13: unknown section '[sesion]'"))
    }

    @Test func settingTheBrokenLineFixesTheFile() throws {
        let broken = "[session]\ncountdown = 3 s ; five\n"
        #expect(Settings.check(text: broken, file: "f").isValid == false)
        let edit = try Settings.edit(text: broken, file: "f", key: "session.countdown", value: "5s").get()
        #expect(edit.text == "[session]\ncountdown = 5s\n")
    }

    @Test func keysSetReportsFirstLines() {
        #expect(Settings.keysSet(inText: original) == ["camera.device": 4, "camera.frame_rate": 5,
                                                         "session.countdown": 8, "storage.dir": 12])
    }
}

@Suite struct SettingsDocsTests {
    @Test func markdownTableHasOneRowPerSettingInFileOrder() {
        let rows = Schema.markdownTable().split(separator: "\n").map(String.init)
        #expect(rows.count == Schema.settings.count + 2)
        #expect(rows[0] == "| Key | Type | Default | Allowed | On reload | Description |")
        for (row, spec) in zip(rows.dropFirst(2), Schema.settings) {
            #expect(row.hasPrefix("| `\(spec.key)` | \(spec.type.name) | "))
            // Six cells: pipes inside cells are escaped, so only the seven separators are bare.
            #expect(row.filter { $0 == "|" }.count - row.components("\\|") == 7)
            #expect(row.contains(" | \(spec.reload.tableText) | "))
        }
    }

    @Test func anEmptyDefaultIsShownAsEmpty() {
        #expect(Schema.markdownTable().contains("| `camera.device` | text | *(empty)* | any text of up to 500 characters, or empty |"))
    }

    @Test func describeNamesDefaultTypeAndAllowed() throws {
        let spec = try #require(Schema.spec(for: "button.debounce"))
        #expect(Schema.describe(spec) == """
            button.debounce (default: 30ms)
                A press counts once the line has been stable this long.
                Type: duration. Allowed: 1ms to 1s.
                On reload: the button (its line or input device) is reopened.
            """)
    }
}

extension String {
    /// How many times `needle` occurs.
    func components(_ needle: String) -> Int {
        var count = 0, rest = Substring(self)
        while let r = rest.firstRange(of: needle) { count += 1; rest = rest[r.upperBound...] }
        return count
    }
}
