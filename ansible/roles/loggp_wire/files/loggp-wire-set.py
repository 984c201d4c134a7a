"""Sends one `set` to loggp-wire's control socket and prints `changed` or `unchanged`.

    loggp-wire-set.py SOCKET REQUEST.json TIMEOUT_S

Waits up to TIMEOUT_S for the socket (the wire has just been started), then asks `get`,
sends the request, asks `get` again and compares (the ports' settings, in the wire's
own units, so "10us" and "10000ns" are the same setting).
"""

import json
import socket
import sys
import time


def request(sock_path, req):
    with socket.socket(socket.AF_UNIX, socket.SOCK_STREAM) as s:
        s.connect(sock_path)
        s.sendall((json.dumps(req) + "\n").encode())
        buf = b""
        while not buf.endswith(b"\n"):
            chunk = s.recv(65536)
            if not chunk:
                break
            buf += chunk
    resp = json.loads(buf)
    if not resp.get("ok"):
        sys.exit(f"loggp-wire refused {json.dumps(req)}: {resp.get('error')}")
    return resp


def main():
    sock_path, req_path, timeout = sys.argv[1], sys.argv[2], float(sys.argv[3])
    with open(req_path) as f:
        req = json.load(f)
    deadline = time.monotonic() + timeout
    while True:
        try:
            before = request(sock_path, {"cmd": "get"})["ports"]
            break
        except OSError as e:
            if time.monotonic() > deadline:
                sys.exit(f"loggp-wire's control socket {sock_path} did not answer: {e}")
            time.sleep(0.2)
    if len(req) > 1:
        request(sock_path, req)
    after = request(sock_path, {"cmd": "get"})["ports"]
    print("changed" if after != before else "unchanged")


if __name__ == "__main__":
    main()
