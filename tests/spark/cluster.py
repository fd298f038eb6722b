"""A Spark standalone cluster (one master, ``workers`` workers: one by default) started from the installed pyspark, bound to
127.0.0.1 on free ports, its work and log directories under ``root``; always stopped by ``close``.

    with StandaloneCluster(tmp, worker_env={"PYSPARK_PYTHON": "/bare/bin/python"}) as c:
        subprocess.run(["wireinspect", "spark", "scan", "--master", c.url, ...])
"""

from __future__ import annotations

import os
import signal
import socket
import subprocess
import time


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def spark_home() -> str:
    import pyspark

    return os.path.dirname(os.path.abspath(pyspark.__file__))


class StandaloneCluster:
    def __init__(self, root, worker_env: dict | None = None, cores: int = 1, memory: str = "1g",
                 timeout: float = 90.0, workers: int = 1):
        self.root = str(root)
        self.workers = workers
        self.worker_env = worker_env or {}
        self.cores, self.memory, self.timeout = cores, memory, timeout
        self.procs: list[subprocess.Popen] = []
        self.port = free_port()
        self.url = f"spark://127.0.0.1:{self.port}"

    def _env(self, extra: dict) -> dict:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
        env.update(SPARK_HOME=spark_home(), SPARK_LOCAL_IP="127.0.0.1", SPARK_LOCAL_HOSTNAME="localhost",
                   SPARK_LOG_DIR=os.path.join(self.root, "logs"), SPARK_WORKER_DIR=os.path.join(self.root, "work"),
                   SPARK_NO_DAEMONIZE="1")
        env.update(extra)
        return env

    def _start(self, name: str, args: list, env: dict) -> subprocess.Popen:
        os.makedirs(os.path.join(self.root, "logs"), exist_ok=True)
        log = open(os.path.join(self.root, "logs", f"{name}.log"), "wb")
        cmd = [os.path.join(spark_home(), "bin", "spark-class"), *args]
        p = subprocess.Popen(cmd, stdout=log, stderr=subprocess.STDOUT, env=env, cwd=self.root,
                             start_new_session=True)  # its own process group: close() stops the JVM too
        log.close()
        self.procs.append(p)
        return p

    def log(self, name: str) -> str:
        try:
            with open(os.path.join(self.root, "logs", f"{name}.log"), errors="replace") as f:
                return f.read()
        except OSError:
            return ""

    def _wait_for(self, name: str, text: str, count: int = 1) -> None:
        end = time.monotonic() + self.timeout
        while time.monotonic() < end:
            if self.log(name).count(text) >= count:
                return
            if any(p.poll() is not None for p in self.procs):
                break
            time.sleep(0.3)
        raise RuntimeError(f"the Spark {name} did not start (waited for {text!r}):\n{self.log(name)[-3000:]}")

    def start(self) -> "StandaloneCluster":
        self._start("master", ["org.apache.spark.deploy.master.Master", "--host", "127.0.0.1", "--port",
                               str(self.port), "--webui-port", str(free_port())], self._env({}))
        self._wait_for("master", "I have been elected leader")
        os.makedirs(os.path.join(self.root, "work"), exist_ok=True)
        for i in range(self.workers):
            name = "worker" if i == 0 else f"worker{i + 1}"
            self._start(name, ["org.apache.spark.deploy.worker.Worker", self.url, "--host", "127.0.0.1",
                               "--port", str(free_port()), "--webui-port", str(free_port()), "--cores",
                               str(self.cores), "--memory", self.memory, "--work-dir",
                               os.path.join(self.root, "work")], self._env(self.worker_env))
        for i in range(self.workers):
            self._wait_for("worker" if i == 0 else f"worker{i + 1}", "Successfully registered with master")
        self._wait_for("master", "Registering worker", self.workers)
        return self

    def close(self) -> None:
        for p in reversed(self.procs):
            if p.poll() is None:
                try:
                    os.killpg(p.pid, signal.SIGTERM)
                except ProcessLookupError:
                    pass
        for p in reversed(self.procs):
            try:
                p.wait(timeout=20)
            except subprocess.TimeoutExpired:
                try:
                    os.killpg(p.pid, signal.SIGKILL)
                except ProcessLookupError:
                    pass
                p.wait(timeout=10)
        self.procs.clear()

    def __enter__(self):
        try:
            return self.start()
        except BaseException:
            self.close()
            raise

    def __exit__(self, *exc):
        self.close()
