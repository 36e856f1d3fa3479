"""The Python SDK transport as a front end of the wire suite: each body of a manifest posted raw,
through `httpx.Client(transport=GateTransport())`, to the loopback provider at its path. What
arrives is the provider's record; this prints, a JSON line per body, what the transport did.

    python send.py MANIFEST.json    # {"provider": URL, "bodies": [{"id", "path", "file"}]}
"""

import json
import sys

import httpx

from mediagate_host.transport import GateTransport, MediaRefused


def main() -> None:
    with open(sys.argv[1], encoding="utf-8") as f:
        manifest = json.load(f)
    with httpx.Client(transport=GateTransport(), timeout=120) as client:
        for body in manifest["bodies"]:
            with open(body["file"], "rb") as f:
                content = f.read()
            try:
                r = client.post(manifest["provider"] + body["path"], content=content,
                                headers={"content-type": "application/json", "x-wire-case": body["id"],
                                         "x-wire-front": "python"})
                out = {"id": body["id"], "outcome": "sent", "status": r.status_code}
            except MediaRefused as e:
                out = {"id": body["id"], "outcome": "refused", "refusals": e.refusals}
            except Exception as e:  # noqa: BLE001 - any other failure is the suite's to report
                out = {"id": body["id"], "outcome": "error", "error": f"{type(e).__name__}: {e}"}
            print(json.dumps(out), flush=True)


if __name__ == "__main__":
    main()
