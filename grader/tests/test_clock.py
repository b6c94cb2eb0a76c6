"""What a drill budget charges (``grader.sandbox.clock``): running and sleeping, not the
time spent waiting for a CPU, and never less than the CPU time used."""

from __future__ import annotations

import threading
import time

import pytest

from grader.sandbox import clock
from grader.sandbox.clock import Reading


def test_the_wait_for_a_cpu_is_left_out_and_the_cpu_used_is_the_floor():
    start = Reading(wall=100.0, cpu=10.0, delay=1.0)
    assert Reading(110.0, 11.0, 4.0).charged_since(start) == pytest.approx(7.0)  # 10 s, 3 waiting for a CPU
    assert Reading(110.0, 11.0, 1.0).charged_since(start) == pytest.approx(10.0)  # a sleep is charged
    assert Reading(110.0, 30.0, 1.0).charged_since(start) == pytest.approx(20.0)  # ranks side by side: their CPU
    assert Reading(110.0, 11.0, 50.0).charged_since(start) == pytest.approx(1.0)  # never less than the CPU


def test_without_the_kernels_delay_the_charge_is_the_cpu_time():
    assert Reading(110.0, 12.5, None).charged_since(Reading(100.0, 10.0, 0.0)) == pytest.approx(2.5)
    assert Reading(110.0, 12.5, 3.0).charged_since(Reading(100.0, 10.0, None)) == pytest.approx(2.5)


def test_the_schedstat_reader_takes_the_run_queue_delay_and_nothing_unreadable(tmp_path):
    stat = tmp_path / "schedstat"
    stat.write_text("1069100356 383401000 41\n")
    assert clock.run_delay(stat) == pytest.approx(0.383401)
    stat.write_text("garbage\n")
    assert clock.run_delay(stat) is None
    assert clock.run_delay(tmp_path / "missing") is None


@pytest.mark.skipif(not clock.AVAILABLE, reason="this kernel keeps no run-queue delay (no schedstat)")
def test_a_sleep_is_charged_in_full():
    """It used no CPU, so a budget of CPU time charged it nothing."""
    start = clock.reading()
    time.sleep(0.3)
    assert clock.reading().charged_since(start) >= 0.25


@pytest.mark.skipif(not clock.AVAILABLE, reason="this kernel keeps no run-queue delay (no schedstat)")
def test_the_main_threads_delay_reads_alike_from_any_thread():
    seen: list[float | None] = []
    worker = threading.Thread(target=lambda: seen.append(clock.main_thread_delay()))
    before = clock.main_thread_delay()
    worker.start()
    worker.join()
    after = clock.main_thread_delay()
    assert before is not None and after is not None and seen[0] is not None
    assert before <= seen[0] <= after
