extension Settings {
    /// `[gallery]` settings: the photobooth-gallery service that lets guests take their pictures home
    /// from the booth's own web server, and the index the daemon keeps for it.
    public struct Gallery: Sendable, Hashable {
        /// `gallery.enabled`: the daemon indexes each picture and the gallery serves it.
        public var enabled = false
        /// `gallery.listen`: the IPv4 address the gallery listens on (`0.0.0.0`: every interface).
        public var listen = ""
        /// `gallery.port`: its TCP port.
        public var port = 0
        /// `gallery.url_base`: what a picture's URL starts with (`http://10.42.0.1:8080`); empty: no QR
        /// code (the daemon has no network to learn the booth's address).
        public var urlBase = ""
        /// `url_base` without trailing `/`: a picture's URL is this + `/p/TOKEN`; empty: none.
        public var urlRoot: String {
            var base = urlBase
            while base.hasSuffix("/") { base.removeLast() }
            return base
        }
        /// `gallery.index`: the SQLite index of the pictures.
        public var index = ""
        /// `gallery.secret`: the key the pictures' tokens are made with (the daemon's only).
        public var secret = ""
        /// `gallery.max_connections`: connections served at once, in all.
        public var maxConnections = 0
        /// `gallery.connections_per_client`: connections at once from one address.
        public var connectionsPerClient = 0
        /// `gallery.timeout`: an idle connection is closed after this many milliseconds.
        public var timeoutMilliseconds = 0
        /// `gallery.title`: the picture page's heading.
        public var title = ""
        /// `gallery.download_text`: the download button's words.
        public var downloadText = ""
        /// `gallery.missing_text`: the page for a URL that names no picture.
        public var missingText = ""
        /// `gallery.expiry`: a picture is no longer served this many milliseconds after it was
        /// saved (its file and row stay); nil (`off`): served for as long as it is kept.
        public var expiryMilliseconds: Int? = nil
        /// `gallery.idle_code`: how long the last picture's QR code stays on the idle screen after its
        /// review (until the next session at the latest), in milliseconds; nil (`off`): not shown there.
        /// Short by default: the next guest can scan it too.
        public var idleCodeMilliseconds: Int? = 30_000
        /// `gallery.list`: `/` lists every picture served, newest first, with thumbnails, paged.
        public var list = false
        /// `gallery.slideshow`: `/live` shows each new picture as it is saved, and recent ones in between.
        public var slideshow = false
        /// `gallery.page_size`: pictures on one page of the list.
        public var pageSize = 60
        /// `gallery.slide_time`: how long the slideshow shows each recent picture, in milliseconds.
        public var slideMilliseconds = 8000
        /// `gallery.pin`: the PIN the list and the slideshow ask for; empty: none. A picture's own
        /// URL (its QR code) never asks for it.
        public var pin = ""
        /// `gallery.pin_text`: the words above the PIN's field.
        public var pinText = ""
        /// `gallery.list_text`: the list's heading.
        public var listText = ""
        /// `gallery.cache`: the gallery's folder for what it can make again (thumbnails, rclone's HOME and
        /// cache; its own, not the photos'); safe to empty.
        public var cache = ""
        /// `gallery.state`: the gallery's own folder for what must survive a restart and must not be
        /// emptied (the sync ledger, the alerts' cursor, the PIN cookie's key); `gallery.cache` holds
        /// only what can be made again.
        public var state = ""
        /// `gallery.public_url`: a synced copy's public URL, `{token}` for its name; empty: `url_base`'s.
        public var publicURL = ""
        /// `gallery.sync_remote`: rclone's destination (`REMOTE:path` or an absolute folder); empty: no sync.
        public var syncRemote = ""
        /// `gallery.sync_alert`: the `sync-behind` alert once the sync's backlog has waited this long, in
        /// milliseconds; nil (`off`): none.
        public var syncAlertMilliseconds: Int? = 600_000
        /// `gallery.sync_config`: rclone's config file.
        public var syncConfig = ""
        /// `gallery.alert_url`: the operator's webhook (http or https); empty: no alerts.
        public var alertURL = ""
        /// `gallery.alert_interval`: at most one alert POST per this many milliseconds.
        public var alertIntervalMilliseconds = 60_000
        /// The URL of the picture with `token` that QR codes carry: `public_url` with `{token}`
        /// replaced, else `url_base` + `/p/TOKEN`; nil when both are empty.
        public func pictureURL(token: String) -> String? {
            if !publicURL.isEmpty { return publicURL.replacing("{token}", with: token) }
            return urlRoot.isEmpty ? nil : "\(urlRoot)/p/\(token)"
        }
        /// `gallery.wifi_ssid`: the booth's Wi-Fi, offered as a `WIFI:` QR code on the idle screen; empty: none.
        public var wifiSSID = ""
        /// `gallery.wifi_password`: its password (empty for an open network).
        public var wifiPassword = ""
        /// `gallery.wifi_security`: how it is secured.
        public var wifiSecurity: WiFiSecurity = .wpa

        /// The `WIFI:` code phones join a network with (the ZXing "Barcode Contents" format Android's
        /// camera and iOS 11+ read: `WIFI:T:WPA;S:ssid;P:password;;`, with `\`, `;`, `,`, `:` and `"`
        /// escaped by a backslash); nil without `wifi_ssid`.
        public var wifiCode: String? {
            guard !wifiSSID.isEmpty else { return nil }
            func escaped(_ s: String) -> String {
                var out = ""
                for c in s {
                    if "\\;,:\"".contains(c) { out.append("\\") }
                    out.append(c)
                }
                return out
            }
            switch wifiSecurity {
            case .nopass: return "WIFI:T:nopass;S:\(escaped(wifiSSID));;"
            case .wpa, .wep: return "WIFI:T:\(wifiSecurity.rawValue.uppercased());S:\(escaped(wifiSSID));P:\(escaped(wifiPassword));;"
            }
        }
    }
}

/// `gallery.wifi_security`: the `T:` of a `WIFI:` code.
public enum WiFiSecurity: String, SettingChoice {
    /// WPA/WPA2/WPA3 personal (a password).
    case wpa
    /// WEP (old routers).
    case wep
    /// An open network, no password.
    case nopass
}
