// BoothGallery: photobooth-gallery's HTTP side, so guests take their photos home.
//
// Owns the router and the request parsers (GalleryRoute, ByteRange, GalleryText: pure, fuzzable),
// the pages (PicturePage: plain HTML and CSS for phones) and the server (GalleryServer: GNU
// libmicrohttpd through CHTTPShims, files served from their descriptor). Reads the index
// (BoothIndex) read-only; writes nothing beside the photos.
//
// May import: BoothCore, BoothPorts, BoothStorage (the photos' names), BoothIndex, CMicroHTTPD,
// CHTTPShims and the system.
