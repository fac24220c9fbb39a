#!/usr/bin/env python3
# A webhook receiver for GalleryAlertTests, on 127.0.0.1:PORT: each POST's body is appended to OUT as one
# line (JSON, as received) and answered 200; while the file FAIL exists, POSTs are answered 500 and not kept.
import http.server, os, sys

port, out, fail = int(sys.argv[1]), sys.argv[2], sys.argv[3]

class Hook(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        body = self.rfile.read(int(self.headers.get("Content-Length", "0")))
        if os.path.exists(fail):
            self.send_response(500)
            self.end_headers()
            return
        with open(out, "ab") as f:
            f.write(body.replace(b"\n", b" ") + b"\n")
        self.send_response(200)
        self.send_header("Content-Length", "0")
        self.end_headers()

    def log_message(self, *args):
        pass

http.server.HTTPServer(("127.0.0.1", port), Hook).serve_forever()
