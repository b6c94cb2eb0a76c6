"""Ranks as threads: sums, counts, and clear errors instead of deadlocks."""

from __future__ import annotations

import pytest
import torch

from grader.contract.harness import CollectiveMismatch, from_plain, threaded_ranks, to_plain


def _one_sum(x, all_reduce):
    t = x.clone()
    all_reduce(t)
    return t


def test_threaded_ranks_sum_in_place_and_count_calls():
    run = threaded_ranks(_one_sum, [(torch.tensor([1.0]),), (torch.tensor([2.0]),), (torch.tensor([4.0]),)])
    assert [r.item() for r in run.results] == [7.0, 7.0, 7.0]
    assert run.calls == [1, 1, 1]


def test_a_rank_with_an_extra_call_gets_an_error_not_a_deadlock():
    def uneven(rank, all_reduce):
        for _ in range(rank + 1):
            all_reduce(torch.zeros(1))

    with pytest.raises(CollectiveMismatch, match="every rank must make the same collective calls"):
        threaded_ranks(uneven, [(0,), (1,)])


def test_mismatched_shapes_are_named():
    with pytest.raises(CollectiveMismatch, match=r"rank 1 sent torch.float32 \(2,\)"):
        threaded_ranks(_one_sum, [(torch.zeros(1),), (torch.zeros(2),)])


def test_only_sum_is_accepted():
    def avg(x, all_reduce):
        all_reduce(x, op=torch.distributed.ReduceOp.MAX)

    with pytest.raises(CollectiveMismatch, match="SUM"):
        threaded_ranks(avg, [(torch.zeros(1),), (torch.zeros(1),)])


def test_plain_round_trip_is_exact():
    value = (torch.tensor([[1.5, -2.0]], dtype=torch.float64), [torch.tensor(3), 4], {"a": torch.ones(0, 2)})
    back = from_plain(to_plain(value))
    assert back[0].dtype == torch.float64 and torch.equal(back[0], value[0])
    assert back[1][0].dtype == torch.int64 and back[1][1] == 4
    assert back[2]["a"].shape == (0, 2)


def test_rank_calls_are_recorded_only_in_the_final_example(tmp_path):
    """hypothesis' build context is thread-local: the rank threads must not decide."""
    from hypothesis import given, settings
    from hypothesis import strategies as st

    from grader.contract.forbid import Forbidden
    from grader.contract.impl import Implementation

    (tmp_path / "d").mkdir()
    (tmp_path / "d" / "f.py").write_text(
        "def one_sum(x, all_reduce):\n    t = x.clone()\n    all_reduce(t)\n    return t\n")
    impl = Implementation(tmp_path, "d/f", Forbidden({}))

    @settings(max_examples=5, database=None)
    @given(st.integers(0, 3))
    def passing_search(n):
        impl.run_ranks("one_sum", [(torch.tensor([float(n)]),)] * 2)

    passing_search()
    assert impl.calls == [], "calls of examples that passed were recorded"
    impl.run_ranks("one_sum", [(torch.tensor([1.0]),)] * 2)  # outside hypothesis: recorded
    assert [c["function"] for c in impl.calls] == ["one_sum", "one_sum"]


# ---------------------------------------------------------------- point-to-point ranks

def _pass_right(x, send, recv, rank, world_size):
    """Every rank sends x to its right neighbour and returns what its left one sent;
    even ranks send first, odd ranks receive first."""
    got = torch.empty_like(x)
    right, left = (rank + 1) % world_size, (rank - 1) % world_size
    if rank % 2 == 0:
        send(x, right)
        recv(got, left)
    else:
        recv(got, left)
        send(x, right)
    return got


def test_p2p_ranks_deliver_and_log_messages():
    from grader.contract.harness import threaded_p2p_ranks

    run = threaded_p2p_ranks(_pass_right, [(torch.full((2,), float(r)),) for r in range(3)])
    assert [r.tolist() for r in run.results] == [[2.0, 2.0], [0.0, 0.0], [1.0, 1.0]]
    assert run.sent == [[(1, 2)], [(2, 2)], [(0, 2)]]


def test_p2p_everyone_sending_first_is_a_deadlock_error_not_a_hang():
    from grader.contract.harness import threaded_p2p_ranks

    def send_first(x, send, recv, rank, world_size):
        send(x, (rank + 1) % world_size)
        recv(x, (rank - 1) % world_size)

    with pytest.raises(CollectiveMismatch, match=r"deadlock: rank 0 waits in send\(to 1\)"):
        threaded_p2p_ranks(send_first, [(torch.zeros(1),), (torch.zeros(1),)])


def test_p2p_a_send_nobody_receives_is_named():
    from grader.contract.harness import threaded_p2p_ranks

    def lonely(send, recv, rank, world_size):
        if rank == 0:
            send(torch.zeros(1), 1)

    with pytest.raises(CollectiveMismatch, match="rank 1 returned without the matching recv"):
        threaded_p2p_ranks(lonely, [(), ()])


def test_p2p_refuses_strided_views_and_mismatched_buffers():
    from grader.contract.harness import threaded_p2p_ranks

    def strided(send, recv, rank, world_size):
        if rank == 0:
            send(torch.zeros(2, 2).t(), 1)
        else:
            recv(torch.zeros(4), 0)

    with pytest.raises(CollectiveMismatch, match="contiguous"):
        threaded_p2p_ranks(strided, [(), ()])

    def short_buffer(send, recv, rank, world_size):
        if rank == 0:
            send(torch.zeros(3), 1)
        else:
            recv(torch.zeros(2), 0)

    with pytest.raises(CollectiveMismatch, match="recv buffer must match"):
        threaded_p2p_ranks(short_buffer, [(), ()])


def test_plain_round_trip_keeps_module_grads():
    module = torch.nn.Linear(2, 1)
    module.weight.grad = torch.tensor([[1.0, 2.0]])
    back = from_plain(to_plain(module))
    assert back.weight.grad.tolist() == [[1.0, 2.0]] and back.bias.grad is None
