"""Fault tests: real processes, real databases, real kills. Run them alone: ``pytest -m faults``.

Each test provokes one of the issue's defects with real timings (SIGKILL, SIGINT, SIGSTOP,
racing processes, a deleted file) and asserts an invariant the old behaviour broke. Defects 3
and 8 (the command line) are covered by ``tests/cli/test_cli*.py``.

Invariants, by defect and module:

1. Two drivers on one experiment (``test_one_driver``). A driver is SIGKILLed, then four
   ``hyperlab.resume`` processes are released at one instant (SQLite file; PostgreSQL schema):
   exactly one runs the experiment to DONE; the three others are refused, naming the winner's
   pid; no (trial, attempt) ends twice and a trial's attempts go 1, 2 with no jump; finished
   trials are unchanged, interrupted ones re-run with their params. A resume of an experiment
   whose driver runs raises ``ExperimentBusy`` naming it.
2. ``start()`` and the script exits (``test_script_exit``). The script returns: the experiment
   is STOPPED, its running trials SYS_CANCELED, stderr is one line saying how to resume, and no
   worker is left. With ``wait_on_exit=True`` the interpreter waits: DONE, stderr empty. A
   SIGKILLed driver shows as ``RUNNING (driver lost)`` (``shown_status``) and ``driver_lost``
   (``list_experiments``); a stop request it never saw (sent while it was SIGSTOPped) is
   answered "not applied" and the resume ends DONE. ``hyperlab.load`` shows the lost driver
   too (``Result.driver_lost``, ``summary()``).
4. ``max_duration`` restarted on every resume, or short of what the killed driver spent
   (``test_duration``; SQLite file, PostgreSQL). ``max_duration=8``, SIGKILLed 3 s in (before
   its first heartbeat) and resumed: the stored ``elapsed`` lost at most 1 s of the 3 s the
   driver ran (it is written with every group commit), trials ran 8 - 2.5 to 8 + 1.5 s over
   both runs, ``started_at`` is unchanged, the final ``elapsed`` is in [8, 9.5], DONE.
5. Stopped trials were lost work (``test_stop_resume``). After ``Experiment.stop()``, a
   ``StopExperiment`` control, or Ctrl-C (SIGINT to a driver process), the interrupted trials
   are SYS_CANCELED; resume re-runs them with their params and ``attempt + 1``, and
   ``max_trials`` trials end SUCCEEDED. A trial killed by ``KillTrial`` stays USER_CANCELED,
   has no second attempt, and counts towards ``max_trials``.
6. Failures looked like success (``test_loud_failures``). An objective that always raises:
   ``TrialError`` once the first max(3, concurrency) trials failed, quoting a failed trial's
   whole traceback, ``exc.result`` loadable, ERROR. A wrong metric name: the same after 3
   trials. ``fail_fast=False``: every trial runs, and ``run`` still raises. Some failures:
   ``run`` returns and ``Result.failures()`` counts them.
7. A vanished store was silent data loss (``test_vanished_store``). A 200-trial run whose
   SQLite file (and ``-wal``, ``-shm``) is deleted 2 s in raises ``StoreError`` naming the path;
   it never returns DONE, and no new, empty store appears at the path.
9. kill -9 at random points (``test_kill9``). Seven seeded kills (four on SQLite, three on
   PostgreSQL) spread from the driver's start-up to its last trials, each resumed to the end in
   a new process: trials SUCCEEDED or FAILED before the kill are unchanged; interrupted ones
   re-run with their params and ``attempt + 1``; no (trial, attempt) ends twice; exactly
   ``max_trials`` trials, numbered 0..n-1, all ended, DONE; no worker left (the pids the trials
   recorded); SQLite's ``PRAGMA integrity_check`` is ok.
10. A database restart ended the run (``test_store_outage``). ``pg_ctl restart -m fast`` of a
    PostgreSQL server of the test's own, or the server down for 2 s, under a run of six trials
    (``processes`` and ``threads``): DONE, every trial SUCCEEDED once at attempt 1 with all its
    twenty reports, each status change stored once, no worker left. A SQLite lock held 40 s
    (past the 30 s busy timeout): the same. Past ``store_outage`` (2 s, the server stopped):
    ``StoreUnavailable`` within seconds, no worker left, and the command its message gives
    continues the experiment to DONE. A lease that expired while the server was down is still
    the driver's when it comes back, and a takeover meanwhile is still found (``LeaseLost``). A
    table dropped under the run ends it at once (``StoreError``), not after ``store_outage``.

Helpers: ``objectives`` (module-level objectives that worker processes import; a trial in a
process records its pid in its folder), ``harness`` (driver processes, waiting, pids, attempts).
"""
