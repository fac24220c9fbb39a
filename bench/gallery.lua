-- wrk script for bench/run gallery: every request asks for another of the indexed pictures.
-- GALLERY_TOKENS: a file of tokens, one a line; GALLERY_PREFIX: "/p/" (default: the picture's
-- URLs) or "/t/" (its thumbnail); GALLERY_SUFFIX: "" (the page), ".jpg" (the picture, or with
-- "/t/" the thumbnail) or "/download". GALLERY_PAGES=K (K > 0): the list's pages instead,
-- "/?page=1" to "/?page=K" in turn (no tokens file needed). Each thread walks the whole list from
-- its own starting point.
-- done() prints one line "GALLERY_JSON {...}" for bench/gallery.py (latencies in microseconds).
local pages = tonumber(os.getenv("GALLERY_PAGES") or "0") or 0
local tokens = {}
if pages == 0 then
  for line in io.lines(os.getenv("GALLERY_TOKENS")) do
    if #line > 0 then tokens[#tokens + 1] = line end
  end
end
local prefix = os.getenv("GALLERY_PREFIX") or "/p/"
local suffix = os.getenv("GALLERY_SUFFIX") or ""
local threads = 0

function setup(thread)
  thread:set("first", threads * 7919)
  threads = threads + 1
end

local i = 0
function init(args)
  i = first or 0
end

function request()
  if pages > 0 then
    i = i + 1
    return wrk.format("GET", "/?page=" .. (i % pages + 1))
  end
  i = i % #tokens + 1
  return wrk.format("GET", prefix .. tokens[i] .. suffix)
end

function done(summary, latency, requests)
  local e = summary.errors
  io.write(string.format(
    'GALLERY_JSON {"duration_us": %d, "requests": %d, "bytes": %d, "connect": %d, "read": %d, "write": %d, ' ..
    '"status": %d, "timeout": %d, "p50": %d, "p90": %d, "p99": %d, "max": %d, "mean": %.1f, "tokens": %d}\n',
    summary.duration, summary.requests, summary.bytes, e.connect, e.read, e.write, e.status, e.timeout,
    latency:percentile(50), latency:percentile(90), latency:percentile(99), latency.max, latency.mean,
    pages > 0 and pages or #tokens))
end
