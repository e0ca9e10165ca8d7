#!/usr/bin/env python3
"""Issue 4: `berth server --config` serves HTTPS with the configured certificate.

Makes a throwaway self-signed certificate for 127.0.0.1 with openssl, writes a
config naming it, starts `berth server --config`, and checks that a client
trusting that certificate can submit and read a job over HTTPS, that plain
HTTP on the same port gets no API answer, and that a config naming only the
certificate is rejected with a message naming the key.

Usage: tls_test.py BERTH_BINARY
"""
import os
import ssl
import subprocess
import sys
import tempfile
import urllib.error
import urllib.request

from berth_testlib import Process, admin_token, free_port, request


def main():
    binary = sys.argv[1]
    failures = []
    with tempfile.TemporaryDirectory() as work:
        cert, key = os.path.join(work, "cert.pem"), os.path.join(work, "key.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "rsa:2048", "-nodes", "-days", "1",
                        "-subj", "/CN=127.0.0.1", "-addext", "subjectAltName=IP:127.0.0.1",
                        "-keyout", key, "-out", cert], check=True, capture_output=True)
        port = free_port()
        data_dir = os.path.join(work, "data")
        config = os.path.join(work, "berth.toml")
        with open(config, "w") as f:
            f.write(f'listen = "127.0.0.1:{port}"\ndata_dir = "{data_dir}"\n'
                    f'[tls]\ncert = "{cert}"\nkey = "{key}"\n')
        context = ssl.create_default_context(cafile=cert)
        base = f"https://127.0.0.1:{port}"
        server = Process([binary, "server", "--config", config], os.path.join(work, "log")).start()
        try:
            server.wait_http(base + "/readyz", context=context)
            admin = admin_token(data_dir)
            status, reply = request(base + "/api/v1/jobs", admin, "POST",
                                    {"command": ["true"]}, context=context)
            if status != 201:
                failures.append(f"submit over HTTPS: {status}")
            _, job = request(f"{base}/api/v1/jobs/{reply['id']}", admin, context=context)
            if job.get("state") != "pending":
                failures.append(f"job over HTTPS: {job}")
            try:
                urllib.request.urlopen(f"http://127.0.0.1:{port}/readyz", timeout=5)
                failures.append("plain HTTP answered on the TLS port")
            except (urllib.error.URLError, ConnectionError, OSError):
                pass
        finally:
            server.stop()

        with open(config, "w") as f:
            f.write(f'listen = "127.0.0.1:{port}"\ndata_dir = "{data_dir}"\n[tls]\ncert = "{cert}"\n')
        half = subprocess.run([binary, "server", "--config", config], capture_output=True,
                              text=True, timeout=30)
        if half.returncode == 0 or "key" not in half.stderr:
            failures.append(f"cert without key: rc={half.returncode} {half.stderr!r}")
    if failures:
        print("FAILED:\n  " + "\n  ".join(failures))
        sys.exit(1)
    print("ok: HTTPS with the configured certificate")


if __name__ == "__main__":
    main()
