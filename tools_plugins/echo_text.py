"""MiniClaw example plugin: returns the text it was given.

Reads the call's arguments as JSON on stdin and prints one JSON value on stdout. MiniClaw runs
it with `python3 -I` in this folder, so nothing in the workspace is on its import path; the
workspace, if a plugin needs it, is in the MINICLAW_WORKSPACE variable.
"""
import json
import sys

args = json.load(sys.stdin)
print(json.dumps({"text": args.get("text", "")}, ensure_ascii=False))
