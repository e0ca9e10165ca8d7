"""A minimal Berth REST client for the benchmarks (stdlib only), JSON in and
out. By default a new connection per request (before 4eada4c, answers on a
kept-alive connection came about 40 ms late: no TCP_NODELAY on the server);
keepalive=True reuses one connection."""
import http.client
import json
import os
import urllib.parse


class Berth:
    def __init__(self, url, token, timeout=30, keepalive=False):
        self.keepalive = keepalive
        u = urllib.parse.urlparse(url)
        self.host, self.port = u.hostname, u.port or 80
        self.token, self.timeout = token, timeout
        self.conn = None

    def _connect(self):
        self.conn = http.client.HTTPConnection(self.host, self.port, timeout=self.timeout)

    def call(self, method, path, body=None):
        data = json.dumps(body).encode() if body is not None else None
        headers = {"Authorization": "Bearer " + self.token, "Content-Type": "application/json"}
        for attempt in (0, 1):
            if self.conn is None:
                self._connect()
            try:
                self.conn.request(method, path, body=data, headers=headers)
                r = self.conn.getresponse()
                raw = r.read()
                if not self.keepalive:
                    self.conn.close()
                    self.conn = None
                break
            except (http.client.HTTPException, ConnectionError, OSError):
                self.conn.close()
                self.conn = None
                if attempt:
                    raise
        if r.status >= 400:
            raise RuntimeError(f"{method} {path}: HTTP {r.status} {raw[:200]!r}")
        return json.loads(raw or b"null")

    def submit(self, body):
        return self.call("POST", "/api/v1/jobs", body)["id"]

    def live_jobs(self):
        """Ids of the jobs not yet ended (all pages)."""
        ids, after = [], None
        while True:
            q = "/api/v1/jobs?live=true&limit=1000" + (f"&after={after}" if after else "")
            page = self.call("GET", q)
            ids += [j["id"] for j in page.get("jobs", [])]
            after = page.get("next_after")
            if not after:
                return ids

    def close(self):
        if self.conn:
            self.conn.close()


def admin_token(data_dir):
    with open(os.path.join(data_dir, "admin-token")) as f:
        return f.read().strip()
