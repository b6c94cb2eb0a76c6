"""Grade many candidate drill files quickly: in batches, in parallel processes.

A candidate is one drill file (a mutant, a do-nothing answer, a route). Each batch
process imports the grader once and grades its candidates one after the other
through the one runner every command uses (``grader.grading.pipeline``), with the
quick profile and without shrinking: whether a property fails does not depend on
the shrink, only the counterexample shown does. A candidate's file is alone in a
folder of its own, so nothing of one candidate is seen by the next.

Run as ``python -m grader.authoring.audit.grading JOBS OUT``: it reads the JSON list
of candidates in JOBS and appends one JSON line per graded candidate to OUT.
"""

from __future__ import annotations

import json
import os
import subprocess
import sys
import tempfile
import time
from collections.abc import Callable, Iterable, Iterator
from dataclasses import asdict, dataclass, field
from pathlib import Path

from grader.core.outcomes import NOT_ATTEMPTED, NOT_RUN, PASSED

# A candidate's calls and tests are cut short: a mutant that loops forever costs
# seconds, not the default two minutes.
CALL_TIMEOUT_S = 5
TEST_TIMEOUT_S = 30


@dataclass(frozen=True)
class Candidate:
    """One drill file to grade."""

    key: str          # unique in one audit: "<drill> <kind> <id>"
    drill: str
    source: str
    isolation: str = "none"  # "none" for the course's own derived code; "sandbox" for routes
    first_failure: bool = False  # stop at the first property that fails (a mutant: killed is all we ask)


@dataclass
class Graded:
    """What one candidate's grading found."""

    key: str
    score: float = 0.0
    max_score: float = 0.0
    failed: list[str] = field(default_factory=list)    # properties that failed, erred or timed out
    error: str | None = None                           # the grader could not grade it
    seconds: float = 0.0
    stopped: bool = False                              # stopped at the first failure: the score is not known


class _FirstFailure:
    """A pytest plugin that ends the session at the first failing property."""

    def __init__(self) -> None:
        self.session: object = None
        self.failed: list[str] = []

    def pytest_sessionstart(self, session: object) -> None:
        self.session = session

    def pytest_runtest_logreport(self, report: object) -> None:
        if getattr(report, "failed", False) and self.session is not None:
            self.failed.append(_base(getattr(report, "nodeid", "").rsplit("::", 1)[-1]))
            self.session.shouldstop = "a property failed"  # type: ignore[attr-defined]


def grade_all(course: Path, candidates: list[Candidate], processes: int,
              progress: Callable[[Graded], None] | None = None) -> dict[str, Graded]:
    """Grade every candidate, spread over ``processes`` batch processes (sandboxed
    candidates in batches of their own); returns them by key."""
    results: dict[str, Graded] = {}
    if not candidates:
        return results
    with tempfile.TemporaryDirectory(prefix="torchdrill-audit-") as tmp:
        work = Path(tmp)
        running = [_Batch.start(course, work, i, batch)
                   for i, batch in enumerate(_split(candidates, max(1, processes)))]
        try:
            while any(not b.done for b in running):
                time.sleep(0.2)
                for batch in (b for b in running if not b.done):
                    for graded in batch.finished():
                        results[graded.key] = graded
                        if progress is not None:
                            progress(graded)
        finally:  # stopped (Ctrl-C, a signal): no batch process grades on alone
            for batch in running:
                if batch.proc.poll() is None:
                    batch.proc.kill()
                    batch.proc.wait()
    return results


@dataclass
class _Batch:
    """One batch process and how far its output has been read."""

    proc: subprocess.Popen
    out: Path
    err: Path
    keys: list[str]
    offset: int = 0
    done: bool = False

    @classmethod
    def start(cls, course: Path, work: Path, i: int, batch: list[Candidate]) -> _Batch:
        jobs, out, err = work / f"jobs-{i}.json", work / f"out-{i}.jsonl", work / f"err-{i}.txt"
        jobs.write_text(json.dumps({"course": str(course), "candidates": [asdict(c) for c in batch]}))
        out.touch()
        with err.open("w") as stderr:
            proc = subprocess.Popen([sys.executable, "-m", "grader.authoring.audit.grading", str(jobs), str(out)],
                                    stdout=subprocess.DEVNULL, stderr=stderr,
                                    env={**os.environ, "OMP_NUM_THREADS": "1"})
        return cls(proc, out, err, [c.key for c in batch])

    def finished(self) -> list[Graded]:
        """The candidates graded since the last look; once the process has ended, a
        candidate it never reached is an error naming why."""
        ended = self.proc.poll() is not None
        graded = []
        with self.out.open() as f:
            f.seek(self.offset)
            for line in iter(f.readline, ""):
                if not line.endswith("\n"):
                    break
                graded.append(Graded(**json.loads(line)))
                self.offset = f.tell()
        seen = {g.key for g in graded}
        self.keys = [k for k in self.keys if k not in seen]
        if ended:
            graded += [Graded(k, error=f"the batch process ended ({self.proc.returncode}) before grading it: "
                              + self.err.read_text()[-500:]) for k in self.keys]
            self.done = True
        return graded


def _split(candidates: list[Candidate], processes: int) -> list[list[Candidate]]:
    """Sandboxed and in-process candidates in separate batches, each kind dealt
    round-robin over the processes (a drill's candidates spread, not queued)."""
    batches: list[list[Candidate]] = []
    for isolation in ("none", "sandbox"):
        group = [c for c in candidates if c.isolation == isolation]
        if group:
            n = min(processes, len(group))
            batches += [group[i::n] for i in range(n)]
    return batches


def warm_imports() -> None:
    """Import now what torch imports lazily on a drill's first use (``torch._dynamo``
    on an optimizer's first step): on a busy machine that import outlasts a call's time
    limit, and a limit that cuts it leaves the module half made for every later call."""
    import importlib

    from grader.sandbox.zygote_loop import WARM_IMPORTS

    for name in WARM_IMPORTS:
        importlib.import_module(name)


def _grade_batch(course: Path, candidates: Iterable[Candidate]) -> Iterator[Graded]:
    from grader.core.errors import GradingInterrupted, TorchdrillError
    from grader.core.isolation import Isolation
    from grader.grading.pipeline import run
    from grader.grading.request import GradingRequest, Limits

    warm_imports()

    with tempfile.TemporaryDirectory(prefix="torchdrill-candidate-") as tmp:
        for n, candidate in enumerate(candidates):
            folder = Path(tmp) / str(n)
            target = folder / f"{candidate.drill}.py"
            target.parent.mkdir(parents=True)
            target.write_text(candidate.source, encoding="utf-8")
            request = GradingRequest(course=course, folder=folder, only=(candidate.drill,),
                                     profile="torchdrill-quick", shrink=False, isolation=Isolation(candidate.isolation),
                                     limits=Limits(call_s=CALL_TIMEOUT_S, test_s=TEST_TIMEOUT_S))
            start = time.perf_counter()
            stop = _FirstFailure()
            try:
                results = run(request, plugins=[stop] if candidate.first_failure else [])
            except GradingInterrupted:
                if not stop.failed:
                    raise
                yield Graded(candidate.key, failed=stop.failed, seconds=time.perf_counter() - start, stopped=True)
                continue
            except TorchdrillError as exc:
                yield Graded(candidate.key, error=str(exc)[-1000:], seconds=time.perf_counter() - start)
                continue
            exercise = next(e for e in results["exercises"] if e["id"] == candidate.drill)
            tests = exercise["tests"]
            yield Graded(candidate.key, float(exercise["score"]), float(exercise["max_score"]),
                         sorted({_base(t["name"]) for t in tests if t["outcome"] not in (PASSED, NOT_RUN, NOT_ATTEMPTED)}),
                         seconds=time.perf_counter() - start)


def _base(name: str) -> str:
    return name.split("[", 1)[0]


def main(argv: list[str]) -> int:
    jobs, out = Path(argv[0]), Path(argv[1])
    spec = json.loads(jobs.read_text())
    candidates = [Candidate(**c) for c in spec["candidates"]]
    with out.open("a") as f:
        for graded in _grade_batch(Path(spec["course"]), candidates):
            f.write(json.dumps(asdict(graded)) + "\n")
            f.flush()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
