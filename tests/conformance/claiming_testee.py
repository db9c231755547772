"""A JSON-lines proxy that serves another testee unchanged but for extra features claimed in
its ``hello``: ``python claiming_testee.py FEATURE[,FEATURE] -- COMMAND...``.

The Kafka testee beside the project answers ``clean`` (one pass of Kafka's own log cleaner)
but predates the feature name ``compaction``; tests/conformance/test_kafka_oracle_compaction.py
runs the compaction scenarios on it through this proxy. It changes no other message."""

from __future__ import annotations

import json
import subprocess
import sys


def main(argv: list[str]) -> int:
    features, command = argv[0].split(","), argv[argv.index("--") + 1 :]
    child = subprocess.Popen(command, stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True)
    for line in sys.stdin:
        child.stdin.write(line)
        child.stdin.flush()
        answer = child.stdout.readline()
        if not answer:
            break
        if json.loads(line).get("op") == "hello":
            response = json.loads(answer)
            if response.get("ok"):
                claimed = response["result"]["features"]
                claimed += [f for f in features if f not in claimed]
                answer = json.dumps(response) + "\n"
        sys.stdout.write(answer)
        sys.stdout.flush()
    child.stdin.close()
    return child.wait()


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
