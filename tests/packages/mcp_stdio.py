"""`mediagate mcp` over stdio as an MCP host starts it: initialize, initialized, tools/list.

Usage: python3 mcp_stdio.py PATH-TO-mediagate. Standard library only (it runs beside a freshly
installed package, with nothing else installed). Exits non-zero, saying why, on any deviation.
"""

import json
import queue
import subprocess
import sys
import tempfile
import threading

# A guard against a hung server, not a measurement: the exchange takes milliseconds.
GUARD_SECONDS = 120


def main() -> int:
    exe = sys.argv[1]
    # In a project directory, as a host starts it (never in / or the home directory, which the
    # server refuses to serve without roots or --workspace).
    project = tempfile.mkdtemp(prefix="mediagate-mcp-")
    proc = subprocess.Popen(
        [exe, "mcp"], cwd=project, stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    lines: "queue.Queue[bytes]" = queue.Queue()
    threading.Thread(target=lambda: [lines.put(l) for l in proc.stdout] + [lines.put(b"")], daemon=True).start()

    def send(message: dict) -> None:
        proc.stdin.write((json.dumps(message) + "\n").encode())
        proc.stdin.flush()

    def reply(request_id: int) -> dict:
        while True:
            try:
                line = lines.get(timeout=GUARD_SECONDS)
            except queue.Empty:
                proc.kill()
                raise SystemExit(f"no reply to request {request_id} from {exe} mcp")
            if not line:
                raise SystemExit(f"{exe} mcp closed stdout; stderr: {proc.stderr.read().decode(errors='replace')}")
            message = json.loads(line)  # stdout carries nothing but protocol messages
            if message.get("id") == request_id:
                if "error" in message:
                    raise SystemExit(f"request {request_id} failed: {message['error']}")
                return message["result"]

    send({
        "jsonrpc": "2.0", "id": 1, "method": "initialize",
        "params": {
            "protocolVersion": "2025-11-25",
            "capabilities": {},
            "clientInfo": {"name": "mediagate-package-test", "version": "0"},
        },
    })
    init = reply(1)
    assert init["serverInfo"]["name"] == "mediagate", init
    assert "tools" in init["capabilities"], init
    send({"jsonrpc": "2.0", "method": "notifications/initialized"})
    send({"jsonrpc": "2.0", "id": 2, "method": "tools/list", "params": {}})
    tools = reply(2)["tools"]
    names = [t["name"] for t in tools]
    assert names == ["read_image", "view_image"], names
    assert tools[0]["inputSchema"]["type"] == "object", tools[0]
    proc.stdin.close()
    code = proc.wait(timeout=GUARD_SECONDS)
    assert code == 0, f"{exe} mcp exited {code} at the end of its input"
    print(f"ok: {exe} mcp: initialize ({init['serverInfo']['name']} {init['serverInfo']['version']}, "
          f"protocol {init['protocolVersion']}), tools/list: {names}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
