"""Which model-thread jobs are cancelled (app/rewrite/cancel_board.py), now that one model thread serves every
window of the process: a window's new job cancels its own earlier one, never another window's."""

from __future__ import annotations

from app.rewrite.cancel_board import CancelBoard


def test_a_newer_job_cancels_only_its_owners_earlier_one() -> None:
    board = CancelBoard()
    first_window, second_window = 1, 2
    drafting = board.new_job(first_window)
    other = board.new_job(second_window)
    assert not board.is_cancelled(drafting) and not board.is_cancelled(other)  # each waits its turn
    regenerated = board.new_job(first_window)
    assert board.is_cancelled(drafting) and not board.is_cancelled(regenerated) and not board.is_cancelled(other)
    board.cancel(other)  # Esc in the second window
    assert board.is_cancelled(other) and not board.is_cancelled(regenerated)


def test_a_new_model_cancels_every_windows_job_but_not_the_next_ones() -> None:
    board = CancelBoard()
    jobs = [board.new_job(owner) for owner in (1, 2, 3)]
    board.cancel_all()
    assert all(board.is_cancelled(job) for job in jobs)
    after = board.new_job(2)
    assert not board.is_cancelled(after)
    assert board.is_cancelled(12345)  # a job nobody asked for is not run
