#!/usr/bin/env python3
"""bench/gallery.py's clients from many addresses (stdlib only): wrk cannot bind a source address,
and the gallery's default gallery.connections_per_client (8) refuses most of wrk -c50 from one.

CLIENTS clients, each on its own loopback address (FIRST, FIRST+1, ...: the whole 127/8 is loopback
on Linux) with one keep-alive connection, each asking for the next of the tokens (its own
starting point) as soon as its previous answer has arrived whole (a closed loop, as wrk's). One
thread, asyncio buffered protocols (the bodies counted in place, not copied). Run it pinned to a core (taskset).
Prints one line "GALLERY_JSON {...}" as bench/gallery.lua does (latencies in microseconds), with
"addresses", "refused" (connections closed before their answer) and "reconnects".
"""
import argparse
import asyncio
import ipaddress
import json
import math
import socket
import time


def pct(values, p):
    """Nearest-rank percentile."""
    s = sorted(values)
    return s[max(0, min(len(s) - 1, math.ceil(p / 100 * len(s)) - 1))] if s else 0


class Client(asyncio.BufferedProtocol):
    """One connection: one request at a time; the answer's status line, headers and
    Content-Length bytes are counted, not kept (read into one buffer of its own)."""

    def __init__(self, run, first):
        self.run = run
        self.i = first
        self.buffer = bytearray(256 * 1024)
        self.view = memoryview(self.buffer)
        self.head = bytearray()
        self.remaining = None       # body bytes still to come; None while the headers come
        self.closed = asyncio.get_running_loop().create_future()
        self.transport = None
        self.sent = 0.0
        self.status = 0

    def connection_made(self, transport):
        self.transport = transport
        self.ask()

    def ask(self):
        r = self.run
        self.i = (self.i + 1) % len(r.tokens)
        self.sent = time.perf_counter()
        self.transport.write(f"GET {r.prefix}{r.tokens[self.i]}{r.suffix} HTTP/1.1\r\nHost: booth\r\n\r\n".encode())

    def get_buffer(self, sizehint):
        return self.view

    def buffer_updated(self, nbytes):
        r = self.run
        at = 0
        while at < nbytes:
            if self.remaining is None:
                self.head += self.view[at:nbytes]
                end = self.head.find(b"\r\n\r\n")
                if end < 0:
                    return
                lines = bytes(self.head[:end]).decode("latin-1").split("\r\n")
                at = nbytes - (len(self.head) - end - 4)
                self.head.clear()
                self.status = int(lines[0].split(" ")[1])
                length = 0
                for h in lines[1:]:
                    k, _, v = h.partition(":")
                    if k.strip().lower() == "content-length":
                        length = int(v)
                self.remaining = length
            n = min(self.remaining, nbytes - at)
            self.remaining -= n
            r.bytes += n
            at += n
            if self.remaining == 0:
                self.remaining = None
                if r.measuring:
                    r.latencies.append(time.perf_counter() - self.sent)
                    r.requests += 1
                    if self.status != 200:
                        r.status += 1
                if r.stopping:
                    self.transport.close()
                    return
                self.ask()

    def connection_lost(self, exc):
        if self.remaining is not None or not self.run.stopping:
            self.run.refused += 1
        if not self.closed.done():
            self.closed.set_result(None)


class Run:
    def __init__(self, args, tokens):
        self.tokens = tokens
        self.prefix, self.suffix = args.prefix, args.suffix
        self.latencies, self.requests, self.status, self.bytes, self.refused, self.reconnects = [], 0, 0, 0, 0, 0
        self.measuring = False
        self.stopping = False


async def client(run, address, first):
    loop = asyncio.get_running_loop()
    while not run.stopping:
        s = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        s.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        s.bind((address, 0))
        s.setblocking(False)
        try:
            await loop.sock_connect(s, ("127.0.0.1", run.port))
        except OSError:
            s.close()
            run.refused += 1
            await asyncio.sleep(0.1)
            continue
        _, c = await loop.create_connection(lambda: Client(run, first), sock=s)
        await c.closed
        first = c.i
        if not run.stopping:
            run.reconnects += 1


async def main_async(args):
    with open(args.tokens) as f:
        tokens = [t for t in f.read().split() if t]
    run = Run(args, tokens)
    run.port = args.port
    first = ipaddress.IPv4Address(args.first)
    addresses = [str(first + n) for n in range(args.clients)]
    tasks = [asyncio.create_task(client(run, a, n * 7919 % len(tokens))) for n, a in enumerate(addresses)]
    await asyncio.sleep(args.warmup)
    run.measuring = True
    t0 = time.perf_counter()
    await asyncio.sleep(args.seconds)
    run.measuring = False
    duration = time.perf_counter() - t0
    run.stopping = True
    await asyncio.wait(tasks, timeout=10)
    lat = [x * 1e6 for x in run.latencies]
    print("GALLERY_JSON " + json.dumps({
        "duration_us": int(duration * 1e6), "requests": run.requests, "bytes": run.bytes, "connect": 0, "read": 0, "write": 0,
        "status": run.status, "timeout": 0, "p50": int(pct(lat, 50)), "p90": int(pct(lat, 90)), "p99": int(pct(lat, 99)),
        "max": int(max(lat, default=0)), "mean": sum(lat) / max(1, len(lat)), "tokens": len(tokens),
        "addresses": f"{addresses[0]}-{addresses[-1]}", "refused": run.refused, "reconnects": run.reconnects}), flush=True)


def main():
    ap = argparse.ArgumentParser()
    ap.add_argument("--port", type=int, required=True)
    ap.add_argument("--tokens", required=True, help="a file of tokens, one a line")
    ap.add_argument("--prefix", default="/p/")
    ap.add_argument("--suffix", default="", help="'' the page, '.jpg' the picture, '/download'")
    ap.add_argument("--clients", type=int, default=50)
    ap.add_argument("--first", default="127.0.0.2", help="the first client's address")
    ap.add_argument("--seconds", type=float, default=10)
    ap.add_argument("--warmup", type=float, default=2)
    asyncio.run(main_async(ap.parse_args()))


if __name__ == "__main__":
    main()
