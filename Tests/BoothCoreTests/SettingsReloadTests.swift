import Testing
@testable import BoothCore

@Suite struct SettingsReloadTests {
    @Test("every key of the schema declares how a reload applies it; the table names no unknown key and none twice")
    func everyKeyHasAReloadRule() {
        let keys = Schema.settings.map(\.key)
        let missing = keys.filter { Schema.declaredReloadRule(for: $0) == nil }
        #expect(missing.isEmpty, "keys without a reload rule in Schema.reloadRules: \(missing)")
        let named = Schema.reloadRules.map(\.key)
        let unknown = named.filter { Schema.spec(for: $0) == nil }
        #expect(unknown.isEmpty, "Schema.reloadRules names keys the schema does not have: \(unknown)")
        var seen: Set<String> = []
        let twice = named.filter { !seen.insert($0).inserted }
        #expect(twice.isEmpty, "Schema.reloadRules names keys twice: \(twice)")
        #expect(named == keys, "Schema.reloadRules follows the schema's order")
    }

    @Test("the rules the reload wording depends on")
    func rulesOfNamedKeys() {
        let expected: [(String, ReloadRule)] = [
            ("camera.rotation", .atOnce), ("camera.format", .cameraStream), ("camera.capture_timeout", .nextSession),
            ("display.rotation", .reopen(.screen)), ("preview.size", .reopen(.screen)), ("text.idle", .reopen(.screen)),
            ("button.line", .reopen(.button)), ("led.line", .reopen(.led)), ("print.destination", .reopen(.printer)),
            ("picture.layout", .nextSession), ("session.shots", .nextSession), ("storage.min_free", .atOnce),
            ("storage.dir", .restart), ("print.journal", .restart),
        ]
        for (key, rule) in expected {
            #expect(Schema.spec(for: key)?.reload == rule, "\(key)")
        }
        #expect(ReloadRule.restart.effect == "takes effect after `systemctl restart photoboothd`")
        #expect(ReloadRule.atOnce.effect == "applied at once")
        #expect(ReloadRule.reopen(.screen).word == "reopen-screen")
        #expect(!ReloadRule.restart.appliesWithoutRestart && ReloadRule.nextSession.appliesWithoutRestart)
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
        let new = try old.with(overrides: [("storage.dir", "/elsewhere"), ("camera.rotation", "90"), ("text.idle", "Hi")]).get()
        let changes = old.changes(to: new)
        let inForce = old.applying(changes.filter { $0.rule.appliesWithoutRestart }, from: new)
        #expect(inForce.camera.rotation == .r90)
        #expect(inForce.text.idle == "Hi")
        #expect(inForce.storage.dir == old.storage.dir)
        #expect(inForce.changes(to: new).map(\.key) == ["storage.dir"])
    }
}
