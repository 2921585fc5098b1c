"""Egress proxy benchmark: see run.sh. Everything stays on this machine."""
import http.server, os, socketserver, subprocess, sys, threading, time

SKARN = os.path.abspath(sys.argv[1])
BIG = 100 << 20
PAYLOAD = b"x" * (1 << 20)


class H(http.server.BaseHTTPRequestHandler):
    protocol_version = "HTTP/1.1"

    def log_message(self, *a):
        pass

    def do_GET(self):
        if self.path.startswith("/big"):
            self.send_response(200)
            self.send_header("Content-Length", str(BIG))
            self.end_headers()
            for _ in range(BIG // len(PAYLOAD)):
                self.wfile.write(PAYLOAD)
        else:
            if self.path.startswith("/slow"):
                time.sleep(0.5)
            self.send_response(200)
            self.send_header("Content-Length", "2")
            self.end_headers()
            self.wfile.write(b"ok")


class S(socketserver.ThreadingMixIn, http.server.HTTPServer):
    daemon_threads = True
    request_queue_size = 1024


srv = S(("127.0.0.1", 0), H)
port = srv.server_address[1]
threading.Thread(target=srv.serve_forever, daemon=True).start()
base = f"http://127.0.0.1:{port}"
allow = f"allow:127.0.0.1:{port}"
ws = os.getcwd()


def skarn(net, *cmd):
    return [SKARN, "run", "--no-config", "--preset", "none", "--workspace", ws, "--net", net, "--", *cmd]


def curl(url):
    return ["curl", "-sS", "--noproxy", "", "-o", "/dev/null", "-w",
            "%{time_starttransfer} %{time_total} %{speed_download}", url]


def run(cmd):
    return subprocess.run(cmd, check=True, capture_output=True, text=True).stdout


def best(cmd, n):
    rows = [tuple(map(float, run(cmd).split())) for _ in range(n)]
    return min(rows, key=lambda r: r[1])


d = best(curl(base + "/big"), 3)
p = best(skarn(allow, *curl(base + "/big")), 3)
print(f"100 MiB direct        : {d[1]*1000:8.1f} ms  {d[2]/2**20:8.0f} MiB/s")
print(f"100 MiB through proxy : {p[1]*1000:8.1f} ms  {p[2]/2**20:8.0f} MiB/s  (includes sandbox start-up)")
d = best(curl(base + "/small"), 20)
p = best(skarn(allow, *curl(base + "/small")), 10)
print(f"time to first byte    : direct {d[0]*1000:.2f} ms, through proxy {p[0]*1000:.2f} ms (curl time_starttransfer)")

conc = f"""
import os, threading, time, urllib.request
os.environ["no_proxy"] = os.environ["NO_PROXY"] = ""
h = urllib.request.ProxyHandler({{"http": "http://127.0.0.1:3128"}})
o = urllib.request.build_opener(h)
ok = []
def one():
    try:
        ok.append(o.open("{base}/slow", timeout=60).read() == b"ok")
    except Exception as e:
        ok.append(False); print(e, file=__import__("sys").stderr)
t0 = time.time()
ts = [threading.Thread(target=one) for _ in range(200)]
[t.start() for t in ts]; [t.join() for t in ts]
print(sum(ok), round((time.time() - t0) * 1000))
"""
n, ms = run(skarn(allow, "python3", "-c", conc)).split()
print(f"200 concurrent (0.5 s each, limit 256): {n}/200 ok in {ms} ms")


def start(net, n=20):
    ts = []
    for _ in range(n):
        t0 = time.perf_counter()
        subprocess.run(skarn(net, "/bin/true"), check=True)
        ts.append(time.perf_counter() - t0)
    ts.sort()
    return ts[len(ts) // 2] * 1000


print(f"start-up /bin/true    : --net deny {start('deny'):.1f} ms, --net {allow} {start(allow):.1f} ms (median of 20)")
