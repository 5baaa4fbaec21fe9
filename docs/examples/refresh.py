"""Re-run every ``$ aiinfra ...`` command shown in a docs/examples page and replace the output under it.

Usage (from the repository root): ``python docs/examples/refresh.py docs/examples/training.md docs/examples/cost.md``.
A code block whose first line is ``$ <command>`` is re-run with bash and everything after that line, up to the
closing fence, is replaced by the command's current output. Prose is left alone: read the diff afterwards for
numbers the prose quotes. Prints each command and whether its output changed.
"""

from __future__ import annotations

import re
import subprocess
import sys
from pathlib import Path

BLOCK = re.compile(r"```\n\$ (?P<cmd>[^\n]+)\n(?P<out>.*?)```", re.S)


def refresh(path: Path) -> int:
    text = path.read_text()
    changed = 0

    def run(m: re.Match[str]) -> str:
        nonlocal changed
        cmd = m.group("cmd")
        res = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, check=False)
        out = res.stdout if res.stdout.endswith("\n") or not res.stdout else res.stdout + "\n"
        if res.returncode not in (0, 141):  # 141: SIGPIPE from `| head`
            sys.stderr.write(f"{path}: `{cmd}` exited {res.returncode}: {res.stderr.strip()[:300]}\n")
        status = "same" if out == m.group("out") else "changed"
        changed += status == "changed"
        print(f"{status:8s} {cmd}")
        return f"```\n$ {cmd}\n{out}```"

    path.write_text(BLOCK.sub(run, text))
    return changed


def main() -> None:
    for name in sys.argv[1:]:
        refresh(Path(name))


if __name__ == "__main__":
    main()
