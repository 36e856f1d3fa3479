"""Before/after figures for the fail-closed fixes (SECURITY.md): drives a `mediagate` binary against
loopback VLMs (endless, echoing the key, instant) and with raw MCP lines. Not a test; run it on two
binaries to compare:

    python3 bench/fail_closed.py target/release/mediagate progress 60   # MCP progress, endless reply
    python3 bench/fail_closed.py target/release/mediagate cli 60        # read-image stdout, endless reply
    python3 bench/fail_closed.py target/release/mediagate rss 32 [--memory-budget 1024]  # peak RSS, 7000² GIF
    python3 bench/fail_closed.py target/release/mediagate lines         # bad lines, a duplicate id
    python3 bench/fail_closed.py target/release/mediagate echo          # a key the model echoes
"""
import json, os, socket, subprocess, sys, threading, time, struct, zlib, tempfile, select

BIN = sys.argv[1]
what = sys.argv[2]

def read_request(c):
    """Reads one request (head and its content-length body) from `c`; False if the peer went away."""
    buf = b""
    while b"\r\n\r\n" not in buf:
        d = c.recv(65536)
        if not d: return False
        buf += d
    head, _, body = buf.partition(b"\r\n\r\n")
    n = int([l.split(b":")[1] for l in head.split(b"\r\n") if l.lower().startswith(b"content-length")][0])
    while len(body) < n:
        body += c.recv(1 << 20)
    return True

def serve_on_loopback(handle, backlog):
    """A loopback server running `handle(conn)` per connection on a thread; its /v1 base URL."""
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(backlog)
    def serve():
        while True:
            c, _ = srv.accept(); threading.Thread(target=handle, args=(c,), daemon=True).start()
    threading.Thread(target=serve, daemon=True).start()
    return f"http://127.0.0.1:{srv.getsockname()[1]}/v1"

def endless_vlm():
    stats = {"bytes": 0}
    def handle(c):
        if not read_request(c): return
        c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n")
        ev = ("data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": "all work and no play "}}]}) + "\n\n").encode() * 16
        try:
            while True:
                c.sendall(ev); stats["bytes"] += len(ev)
        except OSError:
            pass
    return serve_on_loopback(handle, 64), stats

def png():
    def chunk(k, d): return struct.pack(">I", len(d)) + k + d + struct.pack(">I", zlib.crc32(k + d))
    rows = b"".join(b"\x00" + bytes([40, 90, 200]) * 8 for _ in range(8))
    return b"\x89PNG\r\n\x1a\n" + chunk(b"IHDR", struct.pack(">IIBBBBB", 8, 8, 8, 2, 0, 0, 0)) + chunk(b"IDAT", zlib.compress(rows)) + chunk(b"IEND", b"")

def gif7000():
    return (b"GIF89a" + (7000).to_bytes(2, "little") * 2 + bytes([0x80, 0, 0, 0, 0, 0, 255, 255, 255])
            + bytes([0x2C, 0, 0, 0, 0, 1, 0, 1, 0, 0]) + bytes([0x02, 0x02, 0x44, 0x01, 0x00, 0x3B]))

def fast_vlm():
    def handle(c):
        if not read_request(c): return
        ev = ("data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": "ok"}}]}) + "\n\ndata: [DONE]\n\n").encode()
        c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n" + ev); c.close()
    return serve_on_loopback(handle, 128)

ws = tempfile.mkdtemp()
open(os.path.join(ws, "icon.png"), "wb").write(png())
open(os.path.join(ws, "big.gif"), "wb").write(gif7000())
env = dict(os.environ, MEDIAGATE_VLM_API_KEY="sk-x-secret")

def mcp(url, extra=()):
    args = [BIN, "mcp", "--workspace", ws] + (["--vlm-url", url, "--vlm-model", "m"] if url else []) + list(extra)
    p = subprocess.Popen(args, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.DEVNULL, env=env)
    send(p, {"jsonrpc": "2.0", "id": "init", "method": "initialize", "params": {"protocolVersion": "2025-11-25", "capabilities": {}, "clientInfo": {"name": "m", "version": "0"}}})
    read(p)
    send(p, {"jsonrpc": "2.0", "method": "notifications/initialized"})
    return p

import queue
QS = {}
def send(p, m): p.stdin.write((json.dumps(m) + "\n").encode()); p.stdin.flush()
def read(p, timeout=None):
    if p.pid not in QS:
        q = queue.Queue(); QS[p.pid] = q
        def pump():
            for line in p.stdout:
                q.put(line)
            q.put(None)
        threading.Thread(target=pump, daemon=True).start()
    try:
        line = QS[p.pid].get(timeout=timeout)
    except queue.Empty:
        return None
    return (line, json.loads(line)) if line else None
def hwm(p):
    return [l for l in open(f"/proc/{p.pid}/status") if l.startswith("VmHWM")][0].split()[1]

if what == "progress":
    url, stats = endless_vlm()
    p = mcp(url)
    t0 = time.time()
    send(p, {"jsonrpc": "2.0", "id": 1, "method": "tools/call", "params": {"name": "read_image", "arguments": {"path": "icon.png"}, "_meta": {"progressToken": "t"}}})
    n = nbytes = 0; result = None
    limit = float(sys.argv[3]) if len(sys.argv) > 3 else 60
    while time.time() - t0 < limit:
        r = read(p, 1)
        if r is None: continue
        line, m = r
        if m.get("method") == "notifications/progress":
            n += 1; nbytes += len(line)
        elif m.get("id") == 1:
            result = m; break
    el = time.time() - t0
    res = "none within %.0fs" % limit if result is None else ("isError=%s, %d chars" % (result["result"].get("isError"), len(result["result"]["content"][0]["text"])))
    print(f"progress: {n} notifications, {nbytes} bytes in {el:.1f}s; result: {res}; VLM bytes written {stats['bytes']}")
    p.kill()
elif what == "rss":
    url = fast_vlm()
    calls = int(sys.argv[3]); extra = sys.argv[4:]
    p = mcp(url, extra)
    for i in range(calls):
        send(p, {"jsonrpc": "2.0", "id": i, "method": "tools/call", "params": {"name": "read_image", "arguments": {"path": "big.gif"}}})
    ok = err = 0; errs = set()
    for i in range(calls):
        _, m = read(p)
        if m["result"].get("isError"): err += 1; errs.add(m["result"]["content"][0]["text"][:90])
        else: ok += 1
    print(f"rss: {calls} concurrent calls on a 7000x7000 GIF {extra}: {ok} ok, {err} errors {errs}; peak RSS (VmHWM) {int(hwm(p))//1024} MiB")
    p.kill()
elif what == "lines":
    p = mcp(None)
    bad = [b"not json", b"\xff\xfe{}", b"[" * 1000 + b"]" * 1000, b'{"jsonrpc":"2.0","id":1,"method":"ping","params":{"p":"' + b"x" * (16 << 20) + b'"}}']
    for b in bad:
        p.stdin.write(b + b"\n")
    p.stdin.flush()
    send(p, {"jsonrpc": "2.0", "id": "after", "method": "ping"})
    answers = []
    while True:
        r = read(p, 30)
        if r is None: answers.append("TIMEOUT"); break
        answers.append(r[1])
        if r[1].get("id") == "after": break
    print("lines:", len(answers) - 1, "answers to", len(bad), "bad lines:", [a if a == "TIMEOUT" else a.get("error", {}).get("code") for a in answers])
    # duplicates: two tools/call with one id against the endless VLM? use the no-VLM server (fast answers)
    send(p, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "read_image", "arguments": {"path": "icon.png"}}})
    send(p, {"jsonrpc": "2.0", "id": 5, "method": "tools/call", "params": {"name": "read_image", "arguments": {"path": "icon.png"}}})
    got = []
    while True:
        r = read(p, 10)
        if r is None: break
        got.append(r[1])
    print("duplicate id 5:", len(got), "answers:", [("error %s" % g["error"]["code"]) if "error" in g else "result" for g in got])
    p.kill()
if what == "cli":
    url, stats = endless_vlm()
    t0 = time.time()
    p = subprocess.Popen([BIN, "read-image", "icon.png", "--workspace", ws, "--vlm-url", url, "--vlm-model", "m"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, env=env)
    n = 0; limit = float(sys.argv[3])
    def count():
        global n
        while True:
            d = p.stdout.read(1 << 16)
            if not d: break
            n += len(d)
    th = threading.Thread(target=count, daemon=True); th.start()
    try:
        p.wait(timeout=limit)
    except subprocess.TimeoutExpired:
        p.kill(); p.wait()
    th.join(2)
    print(f"cli read-image: {n} bytes to stdout in {time.time()-t0:.1f}s, exit {p.returncode}; VLM bytes written {stats['bytes']}")
if what == "echo":
    srv = socket.socket(); srv.bind(("127.0.0.1", 0)); srv.listen(4)
    def serve():
        c, _ = srv.accept()
        read_request(c)
        ev = lambda t: ("data: " + json.dumps({"choices": [{"index": 0, "delta": {"content": t}}]}) + "\n\n").encode()
        c.sendall(b"HTTP/1.1 200 OK\r\ncontent-type: text/event-stream\r\nconnection: close\r\n\r\n" + ev("Your key is sk-x-") + ev("secret, whole: sk-x-secret.") + b"data: [DONE]\n\n"); c.close()
    threading.Thread(target=serve, daemon=True).start()
    out = subprocess.run([BIN, "read-image", "icon.png", "--workspace", ws, "--vlm-url", f"http://127.0.0.1:{srv.getsockname()[1]}/v1", "--vlm-model", "m"], capture_output=True, env=env, timeout=60)
    print("echo:", out.stdout.decode().strip())
