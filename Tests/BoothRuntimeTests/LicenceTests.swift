import BoothRuntime
import BoothTestSupport
import Foundation
import Testing

@Suite("The licence: GPL-3.0-or-later, in LICENSE and in every program's --version")
struct LicenceTests {
    @Test("LICENSE at the package root is the GNU GPL version 3, whole")
    func licenceFile() throws {
        let text = try String(contentsOfFile: "\(packageRoot())/LICENSE", encoding: .utf8)
        #expect(text.contains("GNU GENERAL PUBLIC LICENSE") && text.contains("Version 3, 29 June 2007"))
        #expect(text.contains("END OF TERMS AND CONDITIONS"), "the whole text, not a stub")
        #expect(text.contains("How to Apply These Terms to Your New Programs"))
    }

    @Test("photoboothd, photoboothctl and photobooth-gallery --version: name and version, then the licence; exit 0")
    func versionNamesTheLicence() throws {
        let dir = makeTempDir(); defer { removeTree(dir) }
        for name in ["photoboothd", "photoboothctl", "photobooth-gallery"] {
            let run = runProgram(try builtProgram(name), ["--version"], in: dir)
            #expect(run.status == 0, "\(name): \(run.output)")
            let lines = run.output.split(separator: "\n")
            #expect(lines.first.map(String.init) == "\(name) \(photoboothVersion)", "\(name): \(run.output)")
            #expect(lines.contains { $0.hasPrefix("License GPL-3.0-or-later: GNU GPL version 3 or later") }, "\(name): \(run.output)")
            #expect(lines.contains("There is NO WARRANTY, to the extent permitted by law."), "\(name): \(run.output)")
        }
    }
}
