import BoothIndex

/// The pages the gallery serves: plain HTML and CSS made for phones, no script, no framework; the
/// words are the `[gallery]` settings (the event's language). The picture is sized so that heading,
/// picture and button fit one screen, a phone held upright or sideways (10rem for the rest).
public enum PicturePage {
    /// A picture's page: its heading, the picture (`/p/TOKEN.jpg`), a download button
    /// (`/p/TOKEN/download`, saved as ``GalleryText/downloadName(path:)``).
    public static func html(_ picture: IndexedPicture, config: GalleryServer.Config) -> String {
        let t = picture.token
        return page(title: config.title, body: """
            <h1>\(GalleryText.html(config.title))</h1>
            <img src="/p/\(t).jpg" alt="\(GalleryText.html(config.title))">
            <a class="button" href="/p/\(t)/download" download="\(GalleryText.html(GalleryText.downloadName(path: picture.path)))">\(GalleryText.html(config.downloadText))</a>
            """)
    }

    /// The page of a URL that names no picture (404).
    public static func missing(config: GalleryServer.Config) -> String {
        page(title: config.missingText, body: "<p>\(GalleryText.html(config.missingText))</p>")
    }

    static func page(title: String, body: String, style: String = "") -> String {
        """
        <!doctype html>
        <html><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex">
        <title>\(GalleryText.html(title))</title>
        <style>
        body { margin: 0; padding: 1rem; font-family: sans-serif; background: #111; color: #eee; text-align: center; }
        h1 { font-size: 1.4rem; font-weight: 600; margin: 0.5rem 0 1rem; }
        img { display: block; max-width: 100%; max-height: calc(100vh - 10rem); max-height: calc(100svh - 10rem); min-height: 6rem;
              margin: 0 auto 1.25rem; border-radius: 4px; object-fit: contain; }
        .button { display: inline-block; padding: 0.9rem 2.2rem; border-radius: 2rem; background: #fff; color: #111;
                  font-size: 1.15rem; font-weight: 700; text-decoration: none; }
        p { font-size: 1.1rem; max-width: 30rem; margin: 3rem auto; }
        \(style)</style></head>
        <body>
        \(body)
        </body></html>

        """
    }
}
