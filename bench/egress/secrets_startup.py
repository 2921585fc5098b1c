"""Start-up of `skarn run -- /bin/true`: no secret (net deny), an allow list
without a secret, one secret (its run CA, the proxy, the CA bundle). Median
of 20 each, interleaved. Everything stays on this machine."""
import os, subprocess, sys, tempfile, time

SKARN = os.path.abspath(sys.argv[1])
d = tempfile.mkdtemp(prefix="skarn-bench-secrets-")
home = os.path.join(d, "home")
ws = os.path.join(d, "ws")
os.makedirs(os.path.join(home, ".config/skarn"))
os.makedirs(ws)
with open(os.path.join(d, "val"), "w") as f:
    f.write("bench-value-0123456789abcdef\n")
with open(os.path.join(home, ".config/skarn/config.toml"), "w") as f:
    f.write(f'[secrets.tok]\nfile = "{d}/val"\nhosts = ["api.bench.test"]\n')
base = [SKARN, "run", "--no-config", "--preset", "none", "--workspace", ws]
modes = {
    "no secret (net deny)": base + ["--", "/bin/true"],
    "allow list, no secret": base + ["--net", "allow:api.bench.test", "--", "/bin/true"],
    "one secret": base + ["--secret", "tok", "--", "/bin/true"],
}
env = dict(os.environ, HOME=home)
times = {k: [] for k in modes}
for _ in range(20):
    for k, cmd in modes.items():
        t0 = time.perf_counter()
        subprocess.run(cmd, check=True, env=env, stdout=subprocess.DEVNULL)
        times[k].append(time.perf_counter() - t0)
for k, v in times.items():
    v.sort()
    print(f"start-up /bin/true, {k:22}: {v[len(v)//2]*1000:7.1f} ms (median of 20)")
