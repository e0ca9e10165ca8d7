#!/usr/bin/env python3
"""The web dashboard end to end, in headless Chromium driven by its own flags.

Starts `berth dev` with one node of 4 fake GPUs, submits a job that runs on
all four and one that is blocked behind it, and loads the page the server
serves:

  - the cluster view shows the running job on each of the node's GPUs;
  - the queue lists the blocked job with its reason and its ETA;
  - the job detail (/#job=ID) shows the explanation, and the running job's
    detail shows its log, fetched from the agent; once the blocked job
    started, its detail says its first ETA and how that turned out;
  - the charts have the server's history behind them.

Screenshots go to $BERTH_TEST_ARTIFACTS (default build/test-artifacts/):
dashboard.png (cluster, queue, charts) and dashboard-job.png (job detail).

Usage: dashboard_test.py BERTH_BINARY. Needs Debian's `chromium` (or
$BERTH_CHROMIUM). Everything listens on 127.0.0.1; every process the test
starts is stopped by its PID (Chromium by its process group).
"""
import html.parser
import os
import re
import shutil
import signal
import struct
import subprocess
import sys
import tempfile
import time
import urllib.request
import zlib

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
from berth_testlib import admin_token, berth_dev, free_port, request, wait_until  # noqa: E402

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
LOG_LINE = "hello from the dashboard test"


# --- a small DOM from Chromium's --dump-dom output -------------------------

class Element:
    def __init__(self, tag, attrs, parent):
        self.tag, self.attrs, self.parent = tag, dict(attrs), parent
        self.children = []

    def text(self):
        return " ".join("".join(c if isinstance(c, str) else " " + c.text() + " "
                                for c in self.children).split())

    def walk(self):
        for child in self.children:
            if isinstance(child, Element):
                yield child
                yield from child.walk()

    def find_all(self, tag=None, **attrs):
        """Elements below this one with `tag` and every attribute given
        (data_job="3" means data-job="3"; None means present at all)."""
        wanted = {key.replace("_", "-"): value for key, value in attrs.items()}
        return [e for e in self.walk()
                if (tag is None or e.tag == tag) and
                all(key in e.attrs and (value is None or e.attrs[key] == value)
                    for key, value in wanted.items())]

    def find(self, tag=None, **attrs):
        found = self.find_all(tag, **attrs)
        if not found:
            raise AssertionError(f"no <{tag or '*'}> with {attrs}")
        return found[0]


class DomBuilder(html.parser.HTMLParser):
    VOID = {"area", "base", "br", "col", "embed", "hr", "img", "input", "link", "meta",
            "source", "track", "wbr"}

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.root = Element("#document", {}, None)
        self.current = self.root

    def handle_starttag(self, tag, attrs):
        element = Element(tag, [(k, v if v is not None else "") for k, v in attrs], self.current)
        self.current.children.append(element)
        if tag not in self.VOID:
            self.current = element

    def handle_startendtag(self, tag, attrs):
        self.current.children.append(Element(tag, attrs, self.current))

    def handle_endtag(self, tag):
        node = self.current
        while node is not None and node.tag != tag:
            node = node.parent
        if node is not None and node.parent is not None:
            self.current = node.parent

    def handle_data(self, data):
        self.current.children.append(data)


def parse_dom(text):
    builder = DomBuilder()
    builder.feed(text)
    return builder.root


# --- Chromium -------------------------------------------------------------

def find_chromium():
    for candidate in (os.environ.get("BERTH_CHROMIUM"), "chromium", "chromium-browser"):
        if candidate and shutil.which(candidate):
            return shutil.which(candidate)
    raise SystemExit("dashboard_test: Chromium not found. Install Debian's `chromium` package "
                     "(scripts/install-deps.sh does), or set BERTH_CHROMIUM to its path.")


class Chromium:
    """Headless Chromium runs, each in its own process group, with one private profile."""

    def __init__(self, binary, profile_dir, log_path, env):
        self.binary, self.profile_dir, self.log_path, self.env = binary, profile_dir, log_path, env

    def run(self, url, *flags, timeout=90):
        argv = [self.binary, "--headless=new", "--no-sandbox", "--disable-gpu",
                f"--user-data-dir={self.profile_dir}", "--no-first-run",
                "--no-default-browser-check", "--disable-extensions", "--disable-sync",
                "--disable-background-networking", "--disable-component-update",
                "--disable-default-apps", "--mute-audio", "--hide-scrollbars",
                "--virtual-time-budget=8000", *flags, url]
        with open(self.log_path, "ab") as log:
            process = subprocess.Popen(argv, stdout=subprocess.PIPE, stderr=log,
                                       env=self.env, start_new_session=True)
            try:
                out, _ = process.communicate(timeout=timeout)
            except subprocess.TimeoutExpired:
                out = b""
            finally:
                # Chromium leaves helpers (zygote, renderers): end its whole group.
                try:
                    os.killpg(process.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                process.wait()
        if process.returncode not in (0, -signal.SIGKILL):
            raise AssertionError(f"chromium exited with {process.returncode} on {url}; "
                                 f"see {self.log_path}")
        return out.decode("utf-8", "replace")

    def dom(self, url):
        text = self.run(url, "--dump-dom")
        if "<html" not in text:
            raise AssertionError(f"chromium dumped no DOM for {url}: {text[:200]!r}")
        return parse_dom(text)

    def screenshot(self, url, path):
        if os.path.exists(path):
            os.remove(path)
        self.run(url, f"--screenshot={path}", "--window-size=1400,1000")
        if not os.path.exists(path):
            raise AssertionError(f"chromium wrote no screenshot to {path}")


def check_png(path, width, height):
    """A real picture: PNG of the window's size whose pixels are not all alike."""
    with open(path, "rb") as f:
        data = f.read()
    assert data[:8] == b"\x89PNG\r\n\x1a\n", f"{path}: not a PNG"
    w, h = struct.unpack(">II", data[16:24])
    assert (w, h) == (width, height), f"{path}: {w}x{h}, expected {width}x{height}"
    pixels, at = b"", 8
    while at < len(data):
        length, kind = struct.unpack(">I4s", data[at:at + 8])
        if kind == b"IDAT":
            pixels += data[at + 8:at + 8 + length]
        at += 12 + length
    raw = zlib.decompress(pixels)
    distinct = len(set(raw[i] for i in range(0, len(raw), 7)))
    assert len(data) > 20_000 and distinct > 64, \
        f"{path}: looks blank ({len(data)} bytes, {distinct} distinct byte values)"


# --- the test -------------------------------------------------------------

def main():
    if len(sys.argv) != 2:
        raise SystemExit(__doc__)
    berth = os.path.abspath(sys.argv[1])
    chromium_binary = find_chromium()
    artifacts = os.path.abspath(os.environ.get("BERTH_TEST_ARTIFACTS")
                                or os.path.join(ROOT, "build", "test-artifacts"))
    os.makedirs(artifacts, exist_ok=True)

    with tempfile.TemporaryDirectory(prefix="berth-dashboard-") as tmp:
        data_dir = os.path.join(tmp, "dev")
        os.makedirs(data_dir)
        # A home of its own: berth dev writes where the CLI finds it, and
        # Chromium keeps caches; neither touches the user's.
        env = dict(os.environ, HOME=tmp)
        env.pop("XDG_CONFIG_HOME", None)
        env.pop("XDG_CACHE_HOME", None)
        port = free_port()
        base = f"http://127.0.0.1:{port}"
        dev = berth_dev(berth, data_dir, port, "--nodes", "1", "--fake-gpus", "4xH100-80GB",
                        env=env)
        chromium = Chromium(chromium_binary, os.path.join(tmp, "chromium-profile"),
                            os.path.join(artifacts, "dashboard-chromium.log"), env)
        try:
            dev.start().wait_http(base + "/healthz")
            run(base, data_dir, chromium, artifacts)
        except BaseException:
            print(f"berth dev log (tail):\n{dev.log()}", file=sys.stderr)
            raise
        finally:
            dev.stop()
    print("dashboard_test: ok")


def run(base, data_dir, chromium, artifacts):
    token = wait_until(lambda: os.path.exists(os.path.join(data_dir, "admin-token")) and
                       admin_token(data_dir), 30, "the admin token")
    api = lambda path, **kw: request(base + path, token, **kw)[1]  # noqa: E731

    # The static page needs no token; the data behind it does.
    with urllib.request.urlopen(base + "/", timeout=10) as page:
        assert page.headers["Content-Type"].startswith("text/html"), page.headers
        assert b"/ui/app.js" in page.read()

    wait_until(lambda: any(len(n["gpus"]) == 4 and n["state"] == "up"
                           for n in api("/api/v1/nodes")["nodes"]), 60, "node-1 with 4 GPUs")
    running = api("/api/v1/jobs", method="POST", body={
        "name": "train-llama", "gpus": 4, "time_limit_s": 600,
        "command": ["sh", "-c", f"echo {LOG_LINE}; sleep 300"]})["id"]
    blocked = api("/api/v1/jobs", method="POST", body={
        "name": "eval-sweep", "gpus": 4, "nodelist": "node-[1-2]",
        "command": ["sleep", "60"]})["id"]
    # Issue 29: a Slurm job whose nodes get unequal shares (-N 2 --gpus=4
    # on nodes of 4: 3 + 1); it waits for a second node.
    uneven = api("/api/v1/jobs", method="POST", body={
        "name": "packed", "tasks": 2, "distinct_nodes": True, "wait_for_nodes": True,
        "task_shapes": [{"gpus": 3}, {"gpus": 1}], "command": ["sleep", "60"]})["id"]
    wait_until(lambda: api(f"/api/v1/jobs/{running}")["state"] == "running", 60,
               f"job {running} running")
    # The first cycle after a submit plans its ETA (issue 30).
    why = wait_until(lambda: (lambda e: e if e["reason"] and e["eta"] else None)(
        api(f"/api/v1/jobs/{blocked}/explain")), 60, f"job {blocked} explained with an ETA")
    # The chart of waits counts starts per history sample (one every 5 s):
    # the running job's start is in one once a sample follows it.
    wait_until(lambda: sum(s["starts"] for s in api("/api/v1/history")["samples"]) >= 1, 60,
               f"a history sample with job {running}'s start")
    first_clause = why["message"].split(";")[0]
    # The node pipeline's tally joins the explanation of one job.
    tally = "0 of 1 nodes can start it now: 1 has fewer than 4 free GPUs"
    assert tally in why["message"], why["message"]
    print(f"blocked job {blocked}: {why['reason']}: {why['message']}")

    # Cluster and queue.
    dom = chromium.dom(f"{base}/#token={token}")
    body = dom.find("body")
    assert body.attrs.get("data-ready") == "1", "the page never finished a refresh"
    for index in range(4):
        gpu = dom.find(data_gpu=f"node-1/{index}")
        assert gpu.attrs.get("data-state") == "busy", gpu.attrs
        assert gpu.attrs.get("data-job") == str(running), gpu.attrs
        assert f"#{running}" in gpu.text(), gpu.text()
    assert dom.find("article", data_node="node-1").attrs["data-state"] == "up"
    row = dom.find("tr", data_job_id=str(blocked))
    assert row.attrs["data-state"] == "pending", row.attrs
    reason = row.find("td", data_col="reason")
    assert reason.attrs.get("data-reason") == why["reason"], reason.attrs
    assert first_clause in reason.text(), (first_clause, reason.text())
    eta = row.find("td", data_col="eta")
    assert eta.attrs.get("data-eta") == why["eta"], (eta.attrs, why["eta"])
    assert "in " in eta.text() or "ago" in eta.text(), eta.text()
    # One ETA format everywhere (issue 30): the expected start, then the 80% interval.
    assert re.search(r"expected \d\d:\d\d, 80%: \d\d:\d\d-\d\d:\d\d", eta.text()), eta.text()
    assert "No job has started since the server gave it an ETA" in \
        dom.find("figure", id="chart-eta").text()
    assert dom.find("tr", data_job_id=str(running)).attrs["data-state"] == "running"
    packed = dom.find("tr", data_job_id=str(uneven)).find("td", data_col="gpus")
    assert packed.text() == "3+1", packed.text()
    assert packed.attrs.get("title") == "3 + 1 GPUs on 2 nodes", packed.attrs
    for chart in ("chart-queue", "chart-allocated", "chart-waits"):
        figure = dom.find("figure", id=chart)
        assert int(figure.attrs.get("data-samples", "0")) >= 1, figure.attrs
        assert figure.find_all("svg"), f"{chart}: no chart drawn"
    # Issue 29: it shows GPUs held by jobs, and says so, not "utilization".
    allocated = dom.find("figure", id="chart-allocated").text()
    assert "GPUs allocated" in allocated and "utilization" not in allocated, allocated
    waits = dom.find("figure", id="chart-waits").text()
    assert "1 job started" in waits, waits
    print(f"cluster: node-1 GPUs 0-3 hold job {running}; queue: job {blocked} "
          f"{why['reason']}, ETA {eta.text()}")

    # Job detail: the blocked job's explanation, the running job's log. The
    # second load has no token in its URL: the page kept it.
    detail = chromium.dom(f"{base}/#token={token}&job={blocked}")
    drawer = detail.find("aside", id="job-detail")
    assert "hidden" not in drawer.attrs and drawer.attrs.get("data-job") == str(blocked), \
        drawer.attrs
    explanation = drawer.find("section", id="job-explanation")
    assert explanation.attrs.get("data-reason") == why["reason"], explanation.attrs
    assert first_clause in explanation.text(), (first_clause, explanation.text())
    assert tally in explanation.text(), (tally, explanation.text())
    assert "ETA" in explanation.text() and "Position" in explanation.text(), explanation.text()
    assert "Submitted" in drawer.find("ol", id="job-timeline").text()
    assert "any of node-1, node-2" in drawer.text(), drawer.text()

    detail = chromium.dom(f"{base}/#job={running}")
    drawer = detail.find("aside", id="job-detail")
    assert drawer.attrs.get("data-job") == str(running), drawer.attrs
    placement = drawer.find(id="job-placement")
    assert "node-1" in placement.text() and "GPU 0, 1, 2, 3" in placement.text(), \
        placement.text()
    log = drawer.find("pre", id="job-log").text()
    assert LOG_LINE in log, log
    print(f"job detail: explanation of job {blocked}, log of job {running}")

    # Screenshots: the overview, and the blocked job's detail.
    overview = os.path.join(artifacts, "dashboard.png")
    chromium.screenshot(f"{base}/#token={token}", overview)
    check_png(overview, 1400, 1000)
    job_shot = os.path.join(artifacts, "dashboard-job.png")
    chromium.screenshot(f"{base}/#token={token}&job={blocked}", job_shot)
    check_png(job_shot, 1400, 1000)
    print(f"screenshots: {overview}, {job_shot}")

    # ETA accuracy (issue 30): the blocked job starts once the running one
    # is gone, inside the first interval it was given (the running job's
    # time limit bounds it), and the dashboard says how the first ETAs did.
    api(f"/api/v1/jobs/{running}/cancel", method="POST", body={})
    wait_until(lambda: api(f"/api/v1/jobs/{blocked}")["state"] in ("starting", "running"), 60,
               f"job {blocked} started")
    dom = chromium.dom(f"{base}/#token={token}")
    accuracy = dom.find("figure", id="chart-eta")
    assert "1 of 1 job (100%) started inside the first 80% interval" in accuracy.text(), \
        accuracy.text()
    assert "within a quarter of the wait their first ETA promised, or 10 minutes" in \
        accuracy.text(), accuracy.text()
    assert accuracy.find("g", data_coverage=None).attrs["data-coverage"] == "1.000", \
        accuracy.find_all("g")
    print(f"ETA accuracy: {accuracy.text()}")
    # The started job's detail says what it was told and how that turned out.
    detail = chromium.dom(f"{base}/#token={token}&job={blocked}")
    facts = detail.find("section", id="job-explanation").text()
    assert re.search(r"First ETA\s*expected \d\d:\d\d, 80%: \d\d:\d\d-\d\d:\d\d; "
                     r"started \d\d:\d\d: (right|not within a quarter of the wait), "
                     r"inside the 80%", facts), facts

    api(f"/api/v1/jobs/{blocked}/cancel", method="POST", body={})


if __name__ == "__main__":
    main()
