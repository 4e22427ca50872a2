"""What the tests write under pytest's temporary directory does not outlive
them (issue 46: the exported models pytest kept filled the disk). Loaded for
every test under tests/ (pytest.ini beside this file sets the options).

- tmp_path_retention_policy = failed (pytest.ini): a passing test's tmp_path
  is deleted when the test ends, a passing session's base directory when the
  session ends; pytest keeps the last 3 sessions' otherwise. pytest before 7.3
  (Debian's 7.2, which the 1.13 build's venv uses) has no such option: the
  same is done here, and the options are declared so that pytest does not
  warn about them.
- What the failed tests of a session keep is capped at KEEP_BYTES: past that,
  their largest files are deleted (exported models, archives, external data:
  running the test again makes them again) and the session's summary says
  so. Not with `--basetemp DIR` or `-o tmp_path_retention_policy=all`, which
  keep everything.
- T2O_SHARD="k/n" runs one slice of the collected tests (CTest's way of
  cutting a long file into several tests).
- Where torchvision is not installed (the builds on torch 2.13 and 2.15:
  PyPI has no torchvision that works beside them), a test or test file that
  fails because it imports torchvision is reported as skipped, saying so.
"""
import importlib.util
import os
import re
import shutil
import sys

import pytest

KEEP_BYTES = 100 * 2**20
OLD_PYTEST = tuple(int(p) for p in re.findall(r"\d+", pytest.__version__)[:2]) < (7, 3)

_outcomes = {}  # nodeid -> {"setup"/"call": passed}
_kept = []  # tmp_path directories of failed tests, left for a look
_deleted = [0, 0]  # files, bytes deleted to keep within KEEP_BYTES


def pytest_collection_modifyitems(config, items):
    """T2O_SHARD="k/n": only every n-th collected test from the k-th runs (CTest
    cuts a long file into n tests this way: tests/CMakeLists.txt)."""
    spec = os.environ.get("T2O_SHARD")
    if not spec:
        return
    m = re.fullmatch(r"(\d+)/(\d+)", spec)
    if not m or not int(m.group(1)) < int(m.group(2)):
        raise pytest.UsageError(f"T2O_SHARD={spec!r}: want k/n with 0 <= k < n")
    k, n = int(m.group(1)), int(m.group(2))
    keep = items[k::n]
    kept = set(map(id, keep))
    dropped = [item for item in items if id(item) not in kept]
    if dropped:
        config.hook.pytest_deselected(items=dropped)
    items[:] = keep


NO_TORCHVISION = importlib.util.find_spec("torchvision") is None
NO_TORCHVISION_REASON = "needs torchvision, which is not installed beside this torch"


def _is_missing_torchvision(excinfo):
    return (NO_TORCHVISION and excinfo is not None and excinfo.errisinstance(ModuleNotFoundError)
            and getattr(excinfo.value, "name", None) == "torchvision")


@pytest.hookimpl(hookwrapper=True)
def pytest_runtest_makereport(item, call):
    outcome = yield
    report = outcome.get_result()
    if report.failed and _is_missing_torchvision(call.excinfo):
        report.outcome = "skipped"
        report.longrepr = (str(item.path), item.location[1] or 0, NO_TORCHVISION_REASON)


@pytest.hookimpl(hookwrapper=True)
def pytest_make_collect_report(collector):
    outcome = yield
    report = outcome.get_result()
    if not (NO_TORCHVISION and isinstance(collector, pytest.Module)):
        return
    if report.failed and "No module named 'torchvision'" in str(report.longrepr):
        report.outcome = "skipped"
        report.longrepr = (str(collector.path), 0, NO_TORCHVISION_REASON)
        _torchvision_skips[0] += 1
    elif report.skipped and "torchvision" in str(report.longrepr):  # (pytest.importorskip("torchvision"))
        _torchvision_skips[0] += 1


def pytest_addoption(parser):
    if OLD_PYTEST:
        parser.addini("tmp_path_retention_count", "How many sessions' tmp_path directories to keep (pytest "
                      "before 7.3 keeps 3 whatever this says).", default="3")
        parser.addini("tmp_path_retention_policy", "Which tmp_path directories to keep: all, failed or none "
                      "(for pytest before 7.3: tests/conftest.py).", default="all")


def _factory(config):
    return getattr(config, "_tmp_path_factory", None)


def _policy(config):
    return str(config.getini("tmp_path_retention_policy")).strip()


def _capped(config):
    """Whether what failed tests keep is capped (not when the user chose to keep everything)."""
    factory = _factory(config)
    return (factory is not None and getattr(factory, "_given_basetemp", None) is None
            and _policy(config) != "all")


sys.path.insert(0, os.path.join(os.path.dirname(os.path.dirname(os.path.abspath(__file__))), "tools"))
import disk_watch  # noqa: E402  (its pruning: the largest files first)


def prune(roots, limit):
    """Deletes the largest files under `roots` until they hold at most `limit`
    bytes together (disk_watch.prune per root, the limit shared in order).
    Returns (files, bytes) deleted."""
    count = freed = 0
    for root in roots:
        c, f, kept = disk_watch.prune(root, limit)
        count, freed, limit = count + c, freed + f, max(0, limit - kept)
    return count, freed


def _note_pruned(count, freed):
    _deleted[0] += count
    _deleted[1] += freed


def pytest_runtest_logreport(report):
    if report.when != "teardown":
        _outcomes.setdefault(report.nodeid, {})[report.when] = report.passed


@pytest.hookimpl(trylast=True)
def pytest_runtest_teardown(item, nextitem):
    """After the test's fixtures are torn down (pytest >= 7.3 has then
    deleted a passing test's tmp_path)."""
    outcome = _outcomes.pop(item.nodeid, {})
    path = (getattr(item, "funcargs", None) or {}).get("tmp_path")
    if path is None or not os.path.isdir(str(path)):
        return
    path = str(path)
    policy = _policy(item.config)
    if OLD_PYTEST and (policy == "none" or (policy == "failed" and outcome.get("call", True))):
        shutil.rmtree(path, ignore_errors=True)
        return
    if _capped(item.config):
        _kept.append(path)
        _note_pruned(*prune([p for p in _kept if os.path.isdir(p)], KEEP_BYTES))


# The exit status of a session whose every test file was skipped for want of
# torchvision (pytest's own is 5, "no tests collected"): CTest reports the test
# as skipped (SKIP_RETURN_CODE, tests/CMakeLists.txt).
SKIPPED = 77
_torchvision_skips = [0]


def pytest_sessionfinish(session, exitstatus):
    if exitstatus == pytest.ExitCode.NO_TESTS_COLLECTED and _torchvision_skips[0]:
        session.exitstatus = SKIPPED
    factory = _factory(session.config)
    basetemp = getattr(factory, "_basetemp", None)
    if basetemp is None or not os.path.isdir(str(basetemp)):
        return
    basetemp = str(basetemp)
    policy = _policy(session.config)
    if OLD_PYTEST and getattr(factory, "_given_basetemp", None) is None and (
            policy == "none" or (policy == "failed" and exitstatus == 0)):
        shutil.rmtree(basetemp, ignore_errors=True)
        return
    if exitstatus != 0 and _capped(session.config):
        # (every fixture is torn down by now: the module and session ones' directories count too)
        _note_pruned(*prune([basetemp], KEEP_BYTES))


def pytest_terminal_summary(terminalreporter, exitstatus, config):
    if _deleted[0]:
        basetemp = getattr(_factory(config), "_basetemp", None)
        terminalreporter.write_line(
            f"tests/conftest.py: deleted {_deleted[0]} of the files failed tests left in {basetemp} "
            f"({_deleted[1] / 2**20:.0f} MiB, the largest) to keep at most {KEEP_BYTES // 2**20} MiB there; "
            "`-o tmp_path_retention_policy=all` or `--basetemp DIR` keeps everything")
