"""The steps of ``bench/gpu_runbook.py``, one module each, and what they share.

``common`` (limits, paths, clock, report and log), ``transfer`` (files across the device's limits),
``wheels`` (the libraries the device lacks), ``corpus`` (the text each training call carries), ``plan``
(the calls and their carry), then the steps: ``bench26b``, ``versus_library``, ``sizing`` and
``training`` (train-a, train-b), and ``dry_run`` (all of them at toy scale on CPU).
"""


