"""mediagate from a Python agent: register `read_image`, gate a file, run the tool.

    python example.py WORKSPACE IMAGE [QUESTION]

with the VLM named in the environment (README.md, "The VLM client"; `facts.ENV_VLM_URL` and the rest).

The answer streams to stderr as it arrives; the verdict and the answer go to stdout.
"""

import json
import sys

from mediagate_host import Mediagate, ToolError


def show(kind: str, text: str) -> None:
    # The sink also gets the model's reasoning ("reasoning"), which the answer leaves out.
    if kind == "content":
        print(text, end="", file=sys.stderr, flush=True)


def main(argv: list) -> int:
    workspace, image = argv[1], argv[2]
    question = argv[3] if len(argv) > 3 else None

    # One object per workspace: the component is compiled once (and cached on disk); every call
    # runs in a fresh sandbox that can read the workspace and nothing else.
    gate = Mediagate(workspace=workspace, on_output=show)

    # 1. Register the tool with your LLM: the component publishes its own definition.
    tool = gate.tool_definition()
    print("tool:", tool["name"], "params:", ",".join(sorted(tool["parameters"]["properties"])))

    # 2. The gate, before a file's bytes enter the conversation (same verdict as `mediagate admit`):
    # the claimed type is the one the bytes carry, so a JPEG named .png is admitted as the JPEG it is.
    verdict = gate.admit_file(image, include_data=True)
    if verdict["ok"]:
        block = {"type": verdict["kind"],
                 "source": {"type": "base64", "media_type": verdict["mime"], "data": verdict.pop("data")}}
        print("block:", block["type"], block["source"]["media_type"], len(block["source"]["data"]))
    print("verdict:", json.dumps(verdict, sort_keys=True))

    # 3. The model called read_image: the answer (or the error's words) is the tool result.
    try:
        answer = gate.read_image(image, question)
    except ToolError as e:
        print("tool error:", e.code, e.message)
        return 1
    print("answer:", answer)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
