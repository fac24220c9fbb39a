import BoothCore
import Testing

@Suite struct CArrayStringTests {
    /// A C `char[N]` as Swift imports it: a tuple. The text ends at its first NUL; without one all N bytes
    /// are read (never past them); invalid UTF-8 is replaced, never trapped on.
    @Test func textOfACharArray() {
        let vimc: (CChar, CChar, CChar, CChar, CChar, CChar) = (118, 105, 109, 99, 0, 120)  // "vimc\0x"
        #expect(String(cArray: vimc) == "vimc")
        let full: (CChar, CChar, CChar) = (97, 98, 99)
        #expect(String(cArray: full) == "abc")
        let empty: (CChar, CChar) = (0, 65)
        #expect(String(cArray: empty) == "")
        let invalid: (CChar, CChar, CChar) = (65, CChar(bitPattern: 0xFF), 0)
        #expect(String(cArray: invalid) == "A\u{FFFD}")
    }
}
