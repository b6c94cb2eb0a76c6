"""The environment tox made holds torch's CPU build and nothing of CUDA.

On Linux, PyPI's torch is the CUDA build, with several GB of ``nvidia-*`` packages
and triton; ``constraints-cpu.txt`` (tox's ``PIP_CONSTRAINT``) takes torch from
PyTorch's CPU index instead. A pin or an index that lets the CUDA build back in
fails here, before a learner downloads it.
"""

from __future__ import annotations

import importlib.metadata

import torch

from grader.tests.grading import REPO

CUDA_PACKAGES = ("nvidia-", "triton", "cuda-toolkit", "cuda-bindings", "cuda-python")


def test_no_cuda_package_is_installed():
    names = sorted({(d.metadata["Name"] or "").lower() for d in importlib.metadata.distributions()})
    cuda = [n for n in names if n.startswith(CUDA_PACKAGES)]
    assert not cuda, f"the test environment holds CUDA packages: {cuda}"
    assert torch.version.cuda is None, f"torch {torch.__version__} is a CUDA build"


def test_tox_installs_with_the_cpu_index_and_every_pin():
    tox = (REPO / "tox.ini").read_text()
    assert "PIP_CONSTRAINT = {toxinidir}/constraints-cpu.txt" in tox
    lines = [line.strip() for line in (REPO / "constraints-cpu.txt").read_text().splitlines()
             if line.strip() and not line.startswith("#")]
    assert lines == ["--extra-index-url https://download.pytorch.org/whl/cpu", "-c constraints.txt"]
    assert "torch==" in (REPO / "constraints.txt").read_text()
