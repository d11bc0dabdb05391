"""Test fixtures for the tools: a hand-written PDF and a loopback HTTP server with a few pages."""

from __future__ import annotations

import io
import threading
from collections.abc import Iterator
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from typing import Any

import pytest


def minimal_pdf(text: str) -> bytes:
    """A one-page PDF showing ``text`` (written by hand: no PDF writer needed)."""
    stream = f"BT /F1 12 Tf 72 720 Td ({text}) Tj ET".encode()
    objects = [
        b"<< /Type /Catalog /Pages 2 0 R >>",
        b"<< /Type /Pages /Kids [3 0 R] /Count 1 >>",
        b"<< /Type /Page /Parent 2 0 R /MediaBox [0 0 612 792] /Contents 4 0 R "
        b"/Resources << /Font << /F1 5 0 R >> >> >>",
        b"<< /Length %d >>\nstream\n" % len(stream) + stream + b"\nendstream",
        b"<< /Type /Font /Subtype /Type1 /BaseFont /Helvetica >>",
    ]
    out = io.BytesIO()
    out.write(b"%PDF-1.4\n")
    offsets = []
    for number, body in enumerate(objects, 1):
        offsets.append(out.tell())
        out.write(b"%d 0 obj\n" % number + body + b"\nendobj\n")
    xref = out.tell()
    out.write(b"xref\n0 %d\n0000000000 65535 f \n" % (len(objects) + 1))
    for offset in offsets:
        out.write(b"%010d 00000 n \n" % offset)
    out.write(b"trailer\n<< /Size %d /Root 1 0 R >>\nstartxref\n%d\n%%%%EOF\n" % (len(objects) + 1, xref))
    return out.getvalue()


DRIP_STARTED = threading.Event()
"""Set when the ``/drip`` page has sent its first body byte."""


class _Pages(BaseHTTPRequestHandler):
    def _drip(self) -> None:
        """A body of 40 bytes sent one byte every 0.2 s (until the reader goes away)."""
        self.send_response(200)
        self.send_header("Content-Type", "text/plain")
        self.send_header("Content-Length", "40")
        self.end_headers()
        stop = threading.Event()
        for _ in range(40):
            try:
                self.wfile.write(b"x")
                self.wfile.flush()
            except OSError:
                return
            DRIP_STARTED.set()
            stop.wait(0.2)

    def do_GET(self) -> None:
        if self.path == "/drip":
            self._drip()
            return
        if self.path == "/page":
            body = b"<html><head><style>p{}</style></head><body><h1>Title</h1><p>Some <b>bold</b> text.</p></body></html>"
            self.send_response(200)
            self.send_header("Content-Type", "text/html; charset=utf-8")
        elif self.path == "/big":
            body = "\n".join(f"row {i}" for i in range(400)).encode()
            self.send_response(200)
            self.send_header("Content-Type", "text/plain")
        else:
            body = b"gone"
            self.send_response(404)
        self.send_header("Content-Length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, format: str, *args: Any) -> None:
        return


@pytest.fixture
def pages() -> Iterator[str]:
    server = ThreadingHTTPServer(("127.0.0.1", 0), _Pages)
    server.daemon_threads = True
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}"
    finally:
        server.shutdown()
        server.server_close()
