"""Building a model skeleton on the meta device never leaks into other threads or later loads (#46: with
accelerate installed, the fill-popup test failed after the others with "Cannot copy out of meta tensor")."""

from __future__ import annotations

import threading

from torch import nn

from model.checkpoint.streaming import parameters_on_meta


def test_overlapping_skeleton_builds_in_two_threads_leave_no_patch_behind() -> None:
    original = nn.Module.register_parameter
    a_in, b_in, a_out = threading.Event(), threading.Event(), threading.Event()
    devices: dict[str, str] = {}

    def first() -> None:  # enters first, leaves first
        with parameters_on_meta():
            devices["first"] = nn.Linear(2, 2).weight.device.type
            a_in.set()
            b_in.wait(10)
        a_out.set()

    def second() -> None:  # enters while the first is inside, leaves after it
        a_in.wait(10)
        with parameters_on_meta():
            b_in.set()
            a_out.wait(10)
            devices["second"] = nn.Linear(2, 2).weight.device.type
            devices["bystander"] = _in_another_thread()

    threads = [threading.Thread(target=first), threading.Thread(target=second)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join(20)
    assert devices == {"first": "meta", "second": "meta", "bystander": "cpu"}
    assert nn.Module.register_parameter is original
    assert nn.Linear(2, 2).weight.device.type == "cpu"


def _in_another_thread() -> str:
    """Where a module made meanwhile by a thread outside any skeleton build keeps its parameters."""
    found: list[str] = []
    thread = threading.Thread(target=lambda: found.append(nn.Linear(2, 2).weight.device.type))
    thread.start()
    thread.join(10)
    return found[0]


def test_nested_use_in_one_thread_restores_on_the_way_out() -> None:
    original = nn.Module.register_parameter
    with parameters_on_meta():
        with parameters_on_meta():
            assert nn.Linear(2, 2).weight.device.type == "meta"
        assert nn.Linear(2, 2).weight.device.type == "meta"
    assert nn.Module.register_parameter is original and nn.Linear(2, 2).weight.device.type == "cpu"
