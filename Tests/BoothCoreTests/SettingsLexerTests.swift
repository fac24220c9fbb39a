import Testing
@testable import BoothCore

@Suite("Config lexer")
struct SettingsLexerTests {
    @Test("each line keeps its number, raw text, kind, section and value range")
    func lineModel() throws {
        let text = "# top\n\n[camera]\n  device   =  /dev/video0  \nformat=\n; c\nbad\n"
        let doc = ConfigDocument(parsing: text)
        #expect(doc.lines.count == 7)
        #expect(doc.lines.map(\.number) == Array(1...7))
        #expect(doc.lines[0].kind == .comment)
        #expect(doc.lines[0].section == nil)
        #expect(doc.lines[1].kind == .blank)
        #expect(doc.lines[2].kind == .section(name: "camera"))
        #expect(doc.lines[2].section == "camera")
        let entry = doc.lines[3]
        #expect(entry.kind == .entry(key: "device", value: "/dev/video0"))
        #expect(entry.section == "camera")
        #expect(entry.text == "  device   =  /dev/video0  ")
        let bytes = Array(entry.text.utf8)
        let keyRange = try #require(entry.keyRange), valueRange = try #require(entry.valueRange)
        #expect(String(decoding: bytes[keyRange], as: UTF8.self) == "device")
        #expect(String(decoding: bytes[valueRange], as: UTF8.self) == "/dev/video0")
        #expect(doc.lines[4].kind == .entry(key: "format", value: ""))
        #expect(doc.lines[4].valueRange == 7..<7)
        #expect(doc.lines[5].kind == .comment)
        if case .malformed = doc.lines[6].kind {} else { Issue.record("'bad' should be malformed") }
        #expect(doc.text == text)
    }

    @Test("a '#' after a space or tab starts a comment; a quoted value keeps its '#'; ';' and a '#' inside a word stay")
    func commentsAfterValues() throws {
        let text = "[x]\nline = GPIO17          # the line name\nsource =    # or: gpio\nfooter = \"Party #1\"\t# quoted\n"
            + "a = Anna ; Ben\nb = 2s#x\nc = \"un\" closed # note\nd = x\t#tab\nbackground = #ff0000   # red\ne = #\n"
        let doc = ConfigDocument(parsing: text)
        #expect(doc.lines.map(\.value) == [nil, "GPIO17", "", "\"Party #1\"", "Anna ; Ben", "2s#x", "\"un\" closed", "x", "#ff0000", ""])
        #expect(doc.text == text)
        // An edit replaces the value and keeps the comment.
        let edited = try #require(doc.replacingValue(onLine: 2, with: "GPIO27"))
        #expect(edited.lines[1].text == "line = GPIO27          # the line name")
        #expect(edited.lines[1].value == "GPIO27")
    }

    @Test("text reassembles the file byte for byte: CRLF, no final newline, BOM, blank-only lines")
    func byteIdentity() {
        for text in ["", "\n", "a = b", "[s]\r\nk = v\r\n", "\u{FEFF}[s]\nk=v\n\n\n", "  \t\n# é ü\n[s]\nk = 😀 \n"] {
            #expect(ConfigDocument(parsing: text).text == text, "\(text.debugDescription)")
        }
        let bom = ConfigDocument(parsing: "\u{FEFF}[camera]\n")
        #expect(bom.lines[0].kind == .section(name: "camera"))
    }

    @Test("replacing a value changes only those bytes")
    func replaceValue() throws {
        let text = "# keep me\n[button]\n  debounce =\t30ms   \r\nline = GPIO17\n"
        let doc = ConfigDocument(parsing: text)
        let edited = try #require(doc.replacingValue(onLine: 3, with: "45ms"))
        #expect(edited.text == "# keep me\n[button]\n  debounce =\t45ms   \r\nline = GPIO17\n")
        #expect(edited.lines[2].value == "45ms")
        #expect(edited.lines[2].section == "button")
        let emptied = try #require(doc.replacingValue(onLine: 4, with: ""))
        #expect(emptied.text == "# keep me\n[button]\n  debounce =\t30ms   \r\nline = \n")
        #expect(doc.replacingValue(onLine: 1, with: "x") == nil)
        #expect(doc.replacingValue(onLine: 9, with: "x") == nil)
        #expect(doc.replacingValue(onLine: 3, with: "a\nb") == nil)
    }

    @Test("inserting a key goes after its section's last entry, or into a new section at the end")
    func insertKey() throws {
        let text = "[camera]\ndevice = x\n\n# led\n[led]\nline = 5\n"
        let doc = ConfigDocument(parsing: text)
        let a = try #require(doc.inserting(key: "format", value: "mjpeg", inSection: "camera"))
        #expect(a.text == "[camera]\ndevice = x\nformat = mjpeg\n\n# led\n[led]\nline = 5\n")
        let b = try #require(doc.inserting(key: "debounce", value: "20ms", inSection: "button"))
        #expect(b.text == text + "\n[button]\ndebounce = 20ms\n")
        #expect(b.entries(section: "button", key: "debounce").first?.number == 9)
        let c = try #require(ConfigDocument(parsing: "").inserting(key: "dir", value: "", inSection: "storage"))
        #expect(c.text == "[storage]\ndir =\n")
        let d = try #require(ConfigDocument(parsing: "[led]").inserting(key: "line", value: "3", inSection: "led"))
        #expect(d.text == "[led]\nline = 3")
        let crlf = ConfigDocument(parsing: "[led]\r\nline = 3\r\n")
        let e = try #require(crlf.inserting(key: "active_low", value: "true", inSection: "led"))
        #expect(e.text == "[led]\r\nline = 3\r\nactive_low = true\r\n")
        let f = try #require(crlf.inserting(key: "dir", value: "/p", inSection: "storage"))
        #expect(f.text == "[led]\r\nline = 3\r\n\r\n[storage]\r\ndir = /p\r\n")
        #expect(f.lines.last?.value == "/p")
    }
}
