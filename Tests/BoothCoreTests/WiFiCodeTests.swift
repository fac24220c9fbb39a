import BoothCore
import Testing

@Suite("The idle screen's WIFI: code (gallery.wifi_*)")
struct WiFiCodeTests {
    @Test("WPA, WEP and open networks; \\ ; , : and \" escaped; none without an SSID")
    func code() {
        var g = Settings.defaults.gallery
        #expect(g.wifiCode == nil, "off by default")
        g.wifiSSID = "Photobooth"
        g.wifiPassword = "smile-please"
        #expect(g.wifiCode == "WIFI:T:WPA;S:Photobooth;P:smile-please;;")
        g.wifiSecurity = .wep
        #expect(g.wifiCode == "WIFI:T:WEP;S:Photobooth;P:smile-please;;")
        g.wifiSecurity = .nopass
        #expect(g.wifiCode == "WIFI:T:nopass;S:Photobooth;;")
        g.wifiSecurity = .wpa
        g.wifiSSID = "Anna;Ben: \"2026\", \\o/"
        g.wifiPassword = "a;b,c:d"
        #expect(g.wifiCode == #"WIFI:T:WPA;S:Anna\;Ben\: \"2026\"\, \\o/;P:a\;b\,c\:d;;"#)
    }
}
