import Testing
@testable import BoothCore

@Suite struct SettingsReloadTests {
    @Test("the reload rules the keys declare are sensible for their sections")
    func rulesFitTheirSections() {
        // Each key declares its rule in its own declaration (the compiler requires one); what is left to
        // check is that the rule fits what the key is.
        let restartOnly = Schema.settings.filter { !$0.reload.appliesWithoutRestart }.map(\.key)
        // Every one needs the reason in its declaration (Schema.swift): a new one is added here on purpose.
        #expect(restartOnly == ["camera.backend", "camera.live_view_device", "storage.session_file", "print.journal", "print.spool", "gallery.enabled", "gallery.url_base", "gallery.index", "gallery.secret", "gallery.public_url"])
        for spec in Schema.settings {
            switch spec.reload {
            case .cameraStream:
                #expect(spec.section == "camera", "\(spec.key): only a camera key restarts the camera stream")
            case .reopen(.screen):
                #expect(["display", "preview", "text"].contains(spec.section), "\(spec.key) reopens the screens")
            case .reopen(.button):
                #expect(spec.section == "button", "\(spec.key) reopens the button line")
            case .reopen(.led):
                #expect(spec.section == "led", "\(spec.key) reopens the LED line")
            case .reopen(.printer):
                #expect(spec.section == "print", "\(spec.key) reconnects the printer")
            case .galleryRestart:
                #expect(spec.section == "gallery", "\(spec.key): only a gallery key is photobooth-gallery's alone")
            case .atOnce, .nextSession, .restart:
                break
            }
            switch spec.section {
            case "storage":
                // The store, the worker and the guard read these at every save and press; the booth's
                // session-number record is opened once (the running booth counts on from what it has seen).
                #expect(spec.reload == (spec.key == "storage.session_file" ? .restart : .atOnce), "\(spec.key)")
            case "session", "picture":
                // The machine's timings and the composer are taken when a session begins.
                #expect(spec.reload == .nextSession, "\(spec.key)")
            case "display", "preview", "text":
                #expect(spec.reload == .reopen(.screen), "\(spec.key)")
            default:
                break
            }
        }
    }

    @Test("the rules the reload wording depends on")
    func rulesOfNamedKeys() {
        let expected: [(String, ReloadRule)] = [
            ("camera.rotation", .atOnce), ("camera.format", .cameraStream), ("camera.capture_timeout", .nextSession),
            ("display.rotation", .reopen(.screen)), ("preview.size", .reopen(.screen)), ("text.idle", .reopen(.screen)),
            ("button.line", .reopen(.button)), ("led.line", .reopen(.led)), ("print.destination", .reopen(.printer)),
            ("picture.layout", .nextSession), ("session.shots", .nextSession), ("storage.min_free", .atOnce),
            ("storage.dir", .atOnce), ("print.sheets", .atOnce), ("print.journal", .restart), ("camera.backend", .restart),
        ]
        for (key, rule) in expected {
            #expect(Schema.spec(for: key)?.reload == rule, "\(key)")
        }
        #expect(ReloadRule.restart.effect == "takes effect after `systemctl restart photoboothd`")
        #expect(ReloadRule.atOnce.effect == "applied at once")
        #expect(ReloadRule.galleryRestart.effect == "takes effect after `systemctl restart photobooth-gallery`")
        #expect(Schema.spec(for: "gallery.port")?.reload == .galleryRestart)
        #expect(ReloadRule.reopen(.screen).word == "reopen-screen")
        #expect(!ReloadRule.restart.appliesWithoutRestart && ReloadRule.nextSession.appliesWithoutRestart)
    }

    @Test("config describe says how a reload applies the key")
    func describeSaysOnReload() throws {
        let dir = try #require(Schema.spec(for: "storage.dir"))
        #expect(Schema.describe(dir).contains("On reload: applied at once."))
        let journal = try #require(Schema.spec(for: "print.journal"))
        #expect(Schema.describe(journal).contains("On reload: not applied; takes effect after `systemctl restart photoboothd`."))
    }

    @Test("changes(to:) lists exactly the keys that differ, in schema order, with their rules",
          arguments: [
              ([] as [(String, String)], [] as [String]),
              ([("camera.rotation", "90")], ["camera.rotation"]),
              ([("text.idle", "Hello"), ("camera.rotation", "180")], ["camera.rotation", "text.idle"]),
              ([("session.preview", "off")], ["session.preview"]),
              ([("storage.dir", "/elsewhere"), ("print.copies", "2"), ("display.mirror", "false")],
               ["storage.dir", "print.copies", "display.mirror"]),
              // The default written out is no change.
              ([("camera.rotation", "0"), ("button.debounce", "30ms")], []),
          ])
    func changesTable(edits: [(String, String)], keys: [String]) throws {
        let old = Settings.defaults
        let new = try old.with(overrides: edits.map { (key: $0.0, value: $0.1) }).get()
        let changes = old.changes(to: new)
        #expect(changes.map(\.key) == keys)
        for c in changes {
            #expect(c.rule == Schema.spec(for: c.key)?.reload)
            #expect(c.from == Settings.defaults.text(forKey: c.key))
            #expect(c.to == new.text(forKey: c.key))
        }
        #expect(new.changes(to: new).isEmpty)
    }

    @Test("applying(_:from:) takes only the listed changes: a restart-only key keeps its running value")
    func applyingLeavesRestartKeys() throws {
        let old = Settings.defaults
        let new = try old.with(overrides: [("print.journal", "/elsewhere/journal.json"), ("camera.rotation", "90"), ("text.idle", "Hi")]).get()
        let changes = old.changes(to: new)
        let inForce = old.applying(changes.filter { $0.rule.appliesWithoutRestart }, from: new)
        #expect(inForce.camera.rotation == .r90)
        #expect(inForce.text.idle == "Hi")
        #expect(inForce.print.journal == old.print.journal)
        #expect(inForce.changes(to: new).map(\.key) == ["print.journal"])
    }
}
