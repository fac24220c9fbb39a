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
    }
}
