"""A scripted service for the runner's tests (loggp/run/services.py).

    fake_service.py DIR INDEX [MODE]

It records its pid and the LOGGP_LATENCY it was started beneath in DIR/svc-INDEX.pid and
DIR/svc-INDEX.env, prints `serving port=<4000+INDEX>`, and serves until SIGTERM, when it
appends `stopped` to DIR/svc-INDEX.env and prints its "counters" {"served": INDEX}.
MODE picks a misbehaviour:
  silent   never prints the ready line
  early    exits with status 2 before the ready line
  dies     exits with status 3 just after the ready line
"""

from __future__ import annotations

import json
import os
import signal
import sys
from pathlib import Path


def main() -> int:
    out, index = Path(sys.argv[1]), int(sys.argv[2])
    mode = sys.argv[3] if len(sys.argv) > 3 else ""
    (out / f"svc-{index}.pid").write_text(str(os.getpid()))
    env = out / f"svc-{index}.env"
    env.write_text(os.environ.get("LOGGP_LATENCY", "none") + "\n")
    if mode == "early":
        print("cannot open the store", flush=True)
        return 2
    signal.pthread_sigmask(signal.SIG_BLOCK, {signal.SIGTERM})
    if mode != "silent":
        print(f"serving port={4000 + index}", flush=True)
    if mode == "dies":
        return 3
    signal.sigwait({signal.SIGTERM})
    with env.open("a") as f:
        f.write("stopped\n")
    print(json.dumps({"served": index}), flush=True)  # counters at exit, as servers print
    return 0


if __name__ == "__main__":
    sys.exit(main())
