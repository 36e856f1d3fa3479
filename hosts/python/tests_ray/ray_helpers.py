"""What the tests run inside the Ray workers (importable there: test-ray.sh puts this directory on
the nodes' PYTHONPATH)."""

from __future__ import annotations

import os
from pathlib import Path

import ray

from mediagate_host.ray import AdmitImages


class AdmitImagesTellingItsProcess(AdmitImages):
    """AdmitImages that leaves, for each actor process it runs in, a file named by its pid holding
    its node: the test kills one of those processes and checks where the work ran."""

    def __init__(self, *, pid_dir: str, **options):
        super().__init__(**options)
        Path(pid_dir, str(os.getpid())).write_text(ray.get_runtime_context().get_node_id())
