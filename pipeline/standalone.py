"""A standalone Spark cluster on this machine, on loopback: one master and some workers,
each its own JVM, started from pyspark's own launcher (``bin/spark-class`` with
``org.apache.spark.deploy.master.Master`` and ``org.apache.spark.deploy.worker.Worker``,
on pyspark's bundled jars). The tests run ``scan`` and ``extract`` on it, and
``benchmarks/run`` measures its scaling (figure ``cluster-scaling``).

It is set up as a real cluster is, so that what works on it works on one:

* every port is picked free at start, every address is 127.0.0.1 (the web UIs too:
  ``SPARK_LOCAL_IP``);
* the executors cannot import this checkout. Their Python is this interpreter started with
  ``-S`` (no ``site``, so no ``.pth`` file, so no editable install) and only the
  site-packages directories on its path: pyspark, pyarrow and the other dependencies,
  as a node with them installed has. ``pipeline``, ``klogspec`` and ``reference_impl``
  reach them only as the docs tell a user to ship them (docs/pipeline.md): an archive of
  the packages, ``spark.archives=klogspec.zip#klogspec``, unpacked in each executor's
  directory and put on its path by ``spark.executorEnv.PYTHONPATH``. An archive rather than
  ``--py-files``, because Python cannot load the compiled kernels out of a zip.
"""

from __future__ import annotations

import json
import os
import signal
import socket
import subprocess
import sys
import sysconfig
import time
import urllib.request
import zipfile
from dataclasses import dataclass, field
from pathlib import Path

PACKAGES = ("reference_impl", "klogspec", "pipeline")  # what executors import
MASTER = "org.apache.spark.deploy.master.Master"
WORKER = "org.apache.spark.deploy.worker.Worker"
START_SECONDS = 180  # a JVM's start on a loaded 2-core machine takes up to a minute


def free_port() -> int:
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def spark_home() -> Path:
    import pyspark

    return Path(pyspark.__file__).resolve().parent


def site_packages() -> list[str]:
    paths = sysconfig.get_paths()
    return list(dict.fromkeys([paths["purelib"], paths["platlib"]]))


def package_archive(path: Path, source: Path | None = None) -> Path:
    """A zip of the packages executors import (compiled kernels included), as a user makes
    from a checkout or an unpacked wheel; ``source`` is the directory holding them."""
    source = source or Path(__file__).resolve().parent.parent
    with zipfile.ZipFile(path, "w", zipfile.ZIP_DEFLATED) as archive:
        for package in PACKAGES:
            for file in sorted((source / package).rglob("*")):
                if file.is_file() and "__pycache__" not in file.parts:
                    archive.write(file, file.relative_to(source))
    return path


def executor_python(path: Path) -> Path:
    """The executors' Python: this interpreter without ``site`` (see the module docstring)."""
    path.write_text(f'#!/bin/sh\nexec "{sys.executable}" -S "$@"\n')
    path.chmod(0o755)
    return path


@dataclass
class StandaloneCluster:
    """``with StandaloneCluster(root) as cluster: ... cluster.url ... cluster.driver_conf()``.

    ``workers`` workers of ``cores`` cores and ``memory`` each; ``env`` is added to the
    JVMs' environment (and so the executors'). Logs and work directories are under ``root``.
    """

    root: Path
    workers: int = 2
    cores: int = 1
    memory: str = "1g"
    env: dict[str, str] = field(default_factory=dict)
    processes: list[subprocess.Popen] = field(default_factory=list, init=False)

    def __enter__(self) -> StandaloneCluster:
        try:
            self.start()
        except BaseException:
            self.stop()
            raise
        return self

    def __exit__(self, *exc_info) -> None:
        self.stop()

    def start(self) -> None:
        self.root.mkdir(parents=True, exist_ok=True)
        self.python = executor_python(self.root / "executor-python")
        self.archive = package_archive(self.root / "klogspec.zip")
        self.port, self.ui_port = free_port(), free_port()
        self._launch("master", MASTER, "--host", "127.0.0.1", "--port", str(self.port),
                     "--webui-port", str(self.ui_port))  # fmt: skip
        for n in range(self.workers):
            work = self.root / f"worker-{n}"
            self._launch(f"worker-{n}", WORKER, "--host", "127.0.0.1", "--cores",
                         str(self.cores), "--memory", self.memory, "--work-dir", str(work),
                         "--webui-port", str(free_port()), self.url)  # fmt: skip
        self._wait_for_workers()

    @property
    def url(self) -> str:
        return f"spark://127.0.0.1:{self.port}"

    def driver_conf(self) -> dict[str, str]:
        """The settings a driver on this machine needs for this cluster: loopback, one
        executor per worker, the package shipped, the executors' Python."""
        return {
            "spark.driver.host": "127.0.0.1", "spark.driver.bindAddress": "127.0.0.1",
            "spark.executor.cores": str(self.cores),
            "spark.cores.max": str(self.cores * self.workers),
            "spark.executor.memory": self.memory,
            "spark.archives": f"{self.archive}#klogspec",
            "spark.executorEnv.PYTHONPATH": "klogspec",
            "spark.pyspark.python": str(self.python),
            "spark.pyspark.driver.python": sys.executable,
        }  # fmt: skip

    def conf_options(self) -> list[str]:
        """``driver_conf`` as ``--conf KEY=VALUE`` options of ``klogspec scan/extract``."""
        return [arg for key, value in self.driver_conf().items()
                for arg in ("--conf", f"{key}={value}")]  # fmt: skip

    def jvm_env(self) -> dict[str, str]:
        env = {k: v for k, v in os.environ.items() if not k.startswith(("PYSPARK_", "SPARK_"))}
        env.update({
            "SPARK_HOME": str(spark_home()), "SPARK_LOCAL_IP": "127.0.0.1",
            "PYTHONPATH": os.pathsep.join(site_packages()), "PYSPARK_PYTHON": str(self.python),
        })  # fmt: skip
        env.update(self.env)
        return env

    def _launch(self, name: str, main_class: str, *args: str) -> None:
        log = self.root / f"{name}.log"
        with open(log, "wb") as output:  # the child keeps its own descriptor
            self.processes.append(subprocess.Popen(
                [str(spark_home() / "bin" / "spark-class"), main_class, *args],
                stdin=subprocess.DEVNULL, stdout=output, stderr=subprocess.STDOUT,
                env=self.jvm_env(), cwd=self.root, start_new_session=True,
            ))  # fmt: skip

    def alive_workers(self) -> int:
        url = f"http://127.0.0.1:{self.ui_port}/json/"
        with urllib.request.urlopen(url, timeout=5) as answer:  # noqa: S310 (loopback)
            return int(json.load(answer).get("aliveworkers", 0))

    def _wait_for_workers(self) -> None:
        deadline = time.monotonic() + START_SECONDS
        while time.monotonic() < deadline:
            for process in self.processes:
                if process.poll() is not None:
                    raise RuntimeError(f"a Spark JVM exited {process.returncode}: "
                                       f"{self._log_tails()}")  # fmt: skip
            try:
                if self.alive_workers() == self.workers:
                    return
            except OSError:
                pass  # the master's web UI is not up yet
            time.sleep(0.5)
        raise RuntimeError(f"{self.workers} workers did not register in {START_SECONDS} s: "
                           f"{self._log_tails()}")  # fmt: skip

    def _log_tails(self) -> str:
        return " | ".join(
            f"{log.name}: {log.read_text(errors='replace')[-600:]}"
            for log in sorted(self.root.glob("*.log"))
        )

    def stop(self) -> None:
        """Stops the JVMs this cluster started (each in its own process group, with the
        executors the workers started), workers first."""
        for process in reversed(self.processes):
            if process.poll() is None:
                os.killpg(process.pid, signal.SIGTERM)
        for process in reversed(self.processes):
            try:
                process.wait(timeout=30)
            except subprocess.TimeoutExpired:
                os.killpg(process.pid, signal.SIGKILL)
                process.wait()
        self.processes.clear()
