import BoothIndex

/// The list (`/`), the PIN's form (`/pin`) and the slideshow (`/live`, its script `/live.js`):
/// HTML and CSS as the picture's page (``PicturePage``); the slideshow's script is the only one the
/// gallery serves, from its own URL (the pages' `Content-Security-Policy` allows no inline script).
public enum ListPages {
    /// One page of the list: `pictures` (newest first) as thumbnails (`/t/TOKEN.jpg`, lazily loaded),
    /// each a link to its page; `page` of `pages` (1-based), with links to the newer page (`previous`)
    /// and the older one (`next`), nil where there is none.
    public static func list(_ pictures: [IndexedPicture], page: Int, pages: Int, total: Int, previous: String?, next: String?,
                            config: GalleryServer.Config) -> String {
        var items = ""
        for p in pictures {
            items += "<a href=\"/p/\(p.token)\"><img src=\"/t/\(p.token).jpg\" loading=\"lazy\" alt=\"\"></a>\n"
        }
        var nav = ""
        if let previous { nav += "<a class=\"button\" rel=\"prev\" href=\"\(GalleryText.html(previous))\">&larr;</a> " }
        if pages > 1 { nav += "<span>\(page) / \(pages)</span>" }
        if let next { nav += " <a class=\"button\" rel=\"next\" href=\"\(GalleryText.html(next))\">&rarr;</a>" }
        let empty = total == 0 ? "<p>\(GalleryText.html(config.missingText))</p>" : ""
        return PicturePage.page(title: config.listText, body: """
            <h1>\(GalleryText.html(config.listText))</h1>
            \(empty)<div class="grid" data-total="\(total)">
            \(items)</div>
            <nav>\(nav)</nav>
            """, style: """
            .grid { display: grid; grid-template-columns: repeat(auto-fill, minmax(9rem, 1fr)); gap: 0.4rem; max-width: 80rem; margin: 0 auto 1.25rem; }
            .grid a { display: block; aspect-ratio: 1; background: #222; border-radius: 4px; overflow: hidden; }
            .grid img { width: 100%; height: 100%; max-height: none; min-height: 0; margin: 0; object-fit: cover; }
            nav { font-size: 1.1rem; } nav span { margin: 0 1rem; }
            """)
    }

    /// The PIN's form, posted to `/pin` with the page to go back to (`next`: `/` or `/live`);
    /// `wrong` says the last PIN was not it.
    public static func pin(next: String, wrong: Bool, config: GalleryServer.Config) -> String {
        PicturePage.page(title: config.listText, body: """
            <h1>\(GalleryText.html(config.listText))</h1>
            <form method="post" action="/pin">
            <label for="pin">\(GalleryText.html(config.pinText))</label>
            <input id="pin" name="pin" type="password" inputmode="numeric" autocomplete="off" maxlength="32" required autofocus>
            <input type="hidden" name="next" value="\(GalleryText.html(next))">
            \(wrong ? "<p class=\"wrong\">&#10007;</p>" : "")<button class="button" type="submit">OK</button>
            </form>
            """, style: """
            form { max-width: 20rem; margin: 2rem auto; display: flex; flex-direction: column; gap: 1rem; font-size: 1.1rem; }
            input { font-size: 1.6rem; padding: 0.6rem; text-align: center; border-radius: 0.5rem; border: 0; letter-spacing: 0.3rem; }
            button { border: 0; cursor: pointer; } .wrong { color: #f66; font-size: 2rem; margin: 0; }
            """)
    }

    /// The slideshow's page: one picture filling the screen, black around it; `/live.js` does the rest.
    public static func live(config: GalleryServer.Config) -> String {
        """
        <!doctype html>
        <html><head><meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <meta name="robots" content="noindex">
        <title>\(GalleryText.html(config.listText))</title>
        <style>
        html, body { margin: 0; height: 100%; background: #000; overflow: hidden; cursor: none; }
        img { position: absolute; inset: 0; width: 100%; height: 100%; object-fit: contain; opacity: 0; transition: opacity 0.8s; }
        img.shown { opacity: 1; }
        </style></head>
        <body data-slide-ms="\(config.slideMilliseconds)">
        <img id="a" alt=""><img id="b" alt="">
        <script src="/live.js"></script>
        </body></html>

        """
    }

    /// The slideshow's script: asks `/live.json` for the recent pictures, then again with
    /// `after=CURSOR&wait=1` (a long poll the gallery holds until a picture is saved, 20 s at most);
    /// a new picture is shown at once for twice the slide time, the recent ones in turn in between;
    /// each picture is loaded before it fades in. An error waits 3 s and asks again; a 403 (the
    /// PIN's cookie no longer accepted: a new PIN, or its key made again) goes to the PIN's form.
    public static let liveScript = """
        "use strict";
        (function () {
          var slideMs = parseInt(document.body.dataset.slideMs, 10) || 8000;
          var recent = [], next = 0, cursor = null, timer = null, front = document.getElementById("a"), back = document.getElementById("b");
          function show(p, ms) {
            var img = back;
            img.onload = function () {
              img.className = "shown"; front.className = ""; back = front; front = img;
              document.body.dataset.shown = p.token;
            };
            img.src = p.image;
            clearTimeout(timer);
            timer = setTimeout(cycle, ms);
          }
          function cycle() {
            if (recent.length === 0) { timer = setTimeout(cycle, slideMs); return; }
            next = (next + 1) % recent.length;
            show(recent[next], slideMs);
          }
          function poll() {
            var url = cursor === null ? "/live.json" : "/live.json?wait=1&after=" + cursor;
            fetch(url, { cache: "no-store", credentials: "same-origin" }).then(function (r) {
              if (r.status === 403) { location.href = "/pin?next=/live"; throw new Error("pin"); }
              if (!r.ok) { throw new Error("HTTP " + r.status); }
              return r.json();
            }).then(function (j) {
              var first = cursor === null;
              cursor = j.cursor;
              if (j.reset) { recent = []; }
              if (j.pictures.length > 0) {
                var fresh = j.pictures.slice().reverse();
                recent = fresh.concat(recent).slice(0, j.keep);
                next = 0;
                show(recent[0], first ? slideMs : 2 * slideMs);
              }
              poll();
            }).catch(function (e) { if (e.message !== "pin") { setTimeout(poll, 3000); } });
          }
          poll();
        })();

        """
}
