#!/usr/bin/env python3
"""Hostile load against `winlint serve` (issue 15), reproducible numbers for BENCHMARKS.md.

Starts the given winlint binary on 127.0.0.1 with a fresh self-signed certificate, then for
each scenario runs the attack and, at the same time, a legitimate client that POSTs a bad
Windows pod (servercore:ltsc2019, no selector: must be DENIED) to /validate on a new TLS
connection every 50 ms, each with a 5 s timeout (the chart's timeoutSeconds). It prints the
legitimate client's p50/p99/max, how many answers were missing (timeout or error) and how many
verdicts were wrong. Then it measures one request alone (a fresh server each): the
10 000-container pod and an 8 MiB AdmissionReview holding a long array of small numbers; CPU
seconds of the server (from /proc/<pid>/stat) until the answer and 3 s later, and VmHWM.

Issue 30: the dense pods (thousands of volumes and mounts in one container: 12 000/9 000 is
0.76 MB, 20 000/15 000 is 1.27 MB), CREATE and UPDATE (`kubectl set image` to ltsc2019 on an
ltsc2022 pod), to /validate and /mutate with `?timeout=5s` as the API server sends it (a 4 s
budget): the answer time, its verdict (denied for WIN502, or answered per webhook.onError) and
the CPU seconds. `ONLY=dense` runs just these.

Usage: scripts/webhook-attack.py WINLINT_BINARY [SECONDS per attack, default 10] [EXTRA serve flags...]
Everything goes to 127.0.0.1; every attack is bounded in connections and time.
"""

import json
import os
import resource
import socket
import ssl
import subprocess
import sys
import tempfile
import threading
import time

BIN = sys.argv[1]
DUR = float(sys.argv[2]) if len(sys.argv) > 2 else 10.0
EXTRA = sys.argv[3:]
TIMEOUT = 5.0
CTX = ssl.create_default_context()
CTX.check_hostname = False
CTX.verify_mode = ssl.CERT_NONE
CTX.set_alpn_protocols(["http/1.1"])


def review(obj, uid="u-1"):
    return json.dumps({
        "apiVersion": "admission.k8s.io/v1", "kind": "AdmissionReview",
        "request": {"uid": uid, "kind": {"group": "", "version": "v1", "kind": "Pod"},
                    "resource": {"group": "", "version": "v1", "resource": "pods"},
                    "namespace": "default", "operation": "CREATE", "object": obj},
    }).encode()


def bad_pod(n=1, extra=None):
    c = {"name": "c", "image": "mcr.microsoft.com/windows/servercore:ltsc2019"}
    if extra:
        c.update(extra)
    containers = [dict(c, name=f"c{i}") for i in range(n)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "bad", "namespace": "default"},
            "spec": {"containers": containers}}


LEGIT = review(bad_pod())


class Server:
    def __init__(self, extra=(), nofile=None):
        self.dir = tempfile.mkdtemp()
        cert, key = os.path.join(self.dir, "c.pem"), os.path.join(self.dir, "k.pem")
        subprocess.run(["openssl", "req", "-x509", "-newkey", "ec", "-pkeyopt", "ec_paramgen_curve:P-256",
                        "-nodes", "-keyout", key, "-out", cert, "-days", "1", "-subj", "/CN=127.0.0.1",
                        "-addext", "subjectAltName=IP:127.0.0.1"], check=True, capture_output=True)
        s = socket.socket()
        s.bind(("127.0.0.1", 0))
        self.port = s.getsockname()[1]
        s.close()
        self.log = open(os.path.join(self.dir, "serve.log"), "w")
        self.proc = subprocess.Popen([BIN, "serve", "--listen", f"127.0.0.1:{self.port}", "--tls-cert", cert,
                                      "--tls-key", key, "--cluster-facts=off", *EXTRA, *extra],
                                     stderr=self.log, stdout=subprocess.DEVNULL,
                                     preexec_fn=(lambda: resource.setrlimit(resource.RLIMIT_NOFILE, (nofile, nofile)))
                                     if nofile else None)
        for _ in range(100):
            try:
                status, _, _ = post(self.port, "/healthz", b"", method="GET")
                if status == 200:
                    break
            except OSError:
                time.sleep(0.1)

    def cpu(self):
        f = open(f"/proc/{self.proc.pid}/stat").read().rsplit(")", 1)[1].split()
        return (int(f[11]) + int(f[12])) / os.sysconf("SC_CLK_TCK")

    def hwm_mb(self):
        for line in open(f"/proc/{self.proc.pid}/status"):
            if line.startswith("VmHWM:"):
                return int(line.split()[1]) / 1024
        return 0

    def stop(self):
        self.proc.kill()
        self.proc.wait()


def connect(port, timeout=TIMEOUT):
    raw = socket.create_connection(("127.0.0.1", port), timeout=timeout)
    return CTX.wrap_socket(raw, server_hostname="127.0.0.1")


def post(port, path, body, method="POST", timeout=TIMEOUT):
    """One request on a new connection: (status, body, seconds)."""
    t0 = time.monotonic()
    s = connect(port, timeout)
    s.settimeout(max(0.01, timeout - (time.monotonic() - t0)))
    s.sendall(f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: application/json\r\n"
              f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n".encode() + body)
    data = b""
    while True:
        if time.monotonic() - t0 > timeout:
            raise TimeoutError
        chunk = s.recv(65536)
        if not chunk:
            break
        data += chunk
    s.close()
    head, _, rest = data.partition(b"\r\n\r\n")
    return int(head.split()[1]), rest, time.monotonic() - t0


def legit_client(port, stop, out):
    while not stop.is_set():
        try:
            status, body, dt = post(port, "/validate?timeout=5s", LEGIT)
            ok = status == 200 and b'"allowed":false' in body
            out.append((dt, ok))
        except (OSError, TimeoutError, ValueError, IndexError):
            out.append((None, False))
        time.sleep(0.05)


def hold(sock_list, lock, s):
    with lock:
        sock_list.append(s)


def starvation(port, stop, socks, lock):
    # One connection per second announcing 100 MiB and sending one byte.
    while not stop.is_set():
        try:
            s = connect(port)
            s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: 104857600\r\n\r\n{")
            hold(socks, lock, s)
        except OSError:
            pass
        stop.wait(1.0)


def slow_body(port, stop, socks, lock, n, size, chunked):
    # n connections each trickling a body, one byte every 0.5 s (reconnecting when cut).
    def one():
        while not stop.is_set():
            try:
                s = connect(port)
                if chunked:
                    s.sendall(b"POST /validate HTTP/1.1\r\nHost: x\r\nTransfer-Encoding: chunked\r\n\r\n")
                else:
                    s.sendall(f"POST /validate HTTP/1.1\r\nHost: x\r\nContent-Length: {size}\r\n\r\n".encode())
                hold(socks, lock, s)
                while not stop.is_set():
                    s.sendall(b"1\r\n \r\n" if chunked else b" ")
                    stop.wait(0.5)
            except OSError:
                stop.wait(0.2)
    ts = [threading.Thread(target=one, daemon=True) for _ in range(n)]
    for t in ts:
        t.start()
    stop.wait()


def flood(port, stop, socks, lock, n):
    # Up to n idle TLS connections, kept open (reopened when the server closes them).
    while not stop.is_set():
        with lock:
            have = len(socks)
        if have >= n:
            with lock:
                alive = []
                for s in socks:
                    try:
                        s.setblocking(False)
                        if s.recv(1) == b"":
                            s.close()
                            continue
                    except (BlockingIOError, ssl.SSLWantReadError):
                        pass
                    except OSError:
                        s.close()
                        continue
                    alive.append(s)
                socks[:] = alive
            stop.wait(0.2)
            continue
        try:
            hold(socks, lock, connect(port, timeout=1.0))
        except OSError:
            stop.wait(0.05)


def pct(xs, p):
    xs = sorted(xs)
    return xs[min(len(xs) - 1, int(p * len(xs)))] if xs else float("nan")


def run_attack(name, attack, nofile=None):
    srv = Server(nofile=nofile)
    stop = threading.Event()
    socks, lock, results = [], threading.Lock(), []
    a = threading.Thread(target=attack, args=(srv.port, stop, socks, lock), daemon=True)
    a.start()
    time.sleep(1.0)
    legit = threading.Thread(target=legit_client, args=(srv.port, stop, results), daemon=True)
    legit.start()
    time.sleep(DUR)
    stop.set()
    legit.join(TIMEOUT + 1)
    for s in socks:
        try:
            s.close()
        except OSError:
            pass
    srv.stop()
    lat = [d * 1000 for d, ok in results if d is not None]
    missing = sum(1 for d, _ in results if d is None)
    wrong = sum(1 for d, ok in results if d is not None and not ok)
    accept_failed = open(srv.log.name).read().count("accept failed")
    print(f"{name:28} n={len(results):4} p50={pct(lat, .5):8.1f}ms p99={pct(lat, .99):8.1f}ms "
          f"max={max(lat, default=float('nan')):8.1f}ms missing={missing} wrong={wrong} "
          f"'accept failed' lines={accept_failed}", flush=True)


def dense_pod(image, volumes, mounts):
    vols = [{"name": f"v{i}", "emptyDir": {}} for i in range(volumes)]
    mts = [{"name": f"v{i}", "mountPath": f"C:\\m\\{i}"} for i in range(mounts)]
    return {"apiVersion": "v1", "kind": "Pod", "metadata": {"name": "dense", "namespace": "default"},
            "spec": {"os": {"name": "windows"}, "nodeSelector": {"kubernetes.io/os": "windows"},
                     "tolerations": [{"key": "os", "operator": "Equal", "value": "windows",
                                      "effect": "NoSchedule"}],
                     "containers": [{"name": "c", "image": image, "volumeMounts": mts}],
                     "volumes": vols}}


def dense_reviews():
    old = "mcr.microsoft.com/windows/servercore:ltsc2022"
    new = "mcr.microsoft.com/windows/servercore:ltsc2019"
    for volumes, mounts in ((12000, 9000), (20000, 15000)):
        create = json.loads(review(dense_pod(new, volumes, mounts)))
        update = json.loads(review(dense_pod(new, volumes, mounts)))
        update["request"]["operation"] = "UPDATE"
        update["request"]["oldObject"] = dense_pod(old, volumes, mounts)
        for op, r in (("CREATE", create), ("UPDATE", update)):
            body = json.dumps(r).encode()
            for path in ("/validate", "/mutate"):
                yield f"{volumes // 1000}k vol {op} {path}", body, path + "?timeout=5s"


def one_request(name, body, path="/validate"):
    srv = Server()
    c0 = srv.cpu()
    try:
        status, resp, dt = post(srv.port, path, body, timeout=60)
        verdict = "denied" if b'"allowed":false' in resp else ("allowed" if b'"allowed":true' in resp else "-")
        if b"WIN502" in resp:
            verdict += " WIN502"
        if b"could not evaluate" in resp:
            verdict += " unevaluated"
    except (OSError, TimeoutError) as e:
        status, dt, verdict = f"error {e!r}", float("nan"), "-"
    c1 = srv.cpu()
    time.sleep(3)
    c2 = srv.cpu()
    print(f"{name:30} status={status} verdict={verdict} answer={dt:.2f}s cpu_at_answer={c1 - c0:.2f}s "
          f"cpu_3s_later={c2 - c0:.2f}s VmHWM={srv.hwm_mb():.0f}MB body={len(body) / 1e6:.2f}MB", flush=True)
    srv.stop()


def main():
    if os.environ.get("ONLY") == "dense":
        for name, body, path in dense_reviews():
            one_request(name, body, path)
        return
    print(f"binary: {BIN}; {DUR:.0f} s per attack; legitimate client: new TLS connection every 50 ms, 5 s timeout")
    base = lambda port, stop, socks, lock: stop.wait()
    run_attack("none", base)
    run_attack("starvation (100 MiB CL)", starvation)
    run_attack("slow chunked body x4", lambda p, s, k, l: slow_body(p, s, k, l, 4, 0, True))
    run_attack("300 slow small requests", lambda p, s, k, l: slow_body(p, s, k, l, 300, 2000, False))
    run_attack("connection flood (4000)", lambda p, s, k, l: flood(p, s, k, l, 4000))
    # The same at the process's open-file limit (the issue's `accept failed` storm).
    run_attack("flood at nofile=1024 (2000)", lambda p, s, k, l: flood(p, s, k, l, 2000), nofile=1024)
    big = review(bad_pod(10000, {"securityContext": {"seLinuxOptions": {"level": "s0"}}}))
    one_request("10 000-container pod", big)
    one_request("10 000-container pod /mutate", big, "/mutate")
    obj = bad_pod()
    obj["metadata"]["annotations"] = {}
    obj["spec"]["x"] = []
    n = (8 * 1024 * 1024 - len(review(obj)) - 16) // 2
    arr = review(obj).replace(b'"x": []', b'"x": [' + b",".join([b"1"] * n) + b"]")
    one_request("8 MiB number array", arr)


if __name__ == "__main__":
    main()
