#!/usr/bin/env python3
"""Runs the test suite (any command) and watches the disk use outside the
build tree while it runs: issue 46, where the tests left 23 GB in /tmp.
Standard library only (the Makefile runs it with /usr/bin/python3).

    tools/disk_watch.py [--interval 2] [--keep-mb 300] [--path DIR]... -- COMMAND [ARG]...

- The command runs with TMPDIR set to a folder of this run,
  <tmp>/t2o-test-XXXXXXXX/tmp (<tmp>: $TMPDIR, else /tmp), so that what the
  tests write through the temporary directory (pytest's base directories,
  Python's tempfile, compilers' temporary files) is in one place, whatever
  killed them.
- Every --interval seconds it measures what `du -sx` would of <tmp> (the
  run's folder and whatever is written to <tmp> directly), of /dev/shm
  (memory, shown apart), of each --path, and the free space of <tmp>'s file
  system.
- When the command ends it removes the run's folder; after a failure it
  keeps up to --keep-mb MB of it for a look (the largest files go first)
  until the next run, which removes it. It removes what the run left in
  /dev/shm under t2o-* too. Then it prints for each path the size before
  the run, the peak (when, and the folder that held most of it) and the size
  after, and a warning past the issue's limits: 3 GB more at the peak, 500 MB
  more left behind.
- Its exit status is the command's (128 + N when a signal N ended it).
  Run inside another disk_watch (T2O_DISK_WATCH set), it only runs the
  command: the outer one watches.
"""
import argparse
import os
import shutil
import signal
import subprocess
import sys
import tempfile
import threading
import time

PREFIX = "t2o-test-"
SHM = "/dev/shm"
PEAK_LIMIT = 3_000_000_000  # issue 46: at most 3 GB more at any time
LEFT_LIMIT = 500_000_000  # and less than 500 MB more left behind


def human(n):
    """Decimal units, as the issue's limits are given (du -h uses binary ones)."""
    sign, n = ("-" if n < 0 else ""), abs(n)
    if n < 1000:
        return f"{sign}{n:.0f} B"
    for unit in ("kB", "MB", "GB", "TB"):
        n /= 1000
        if n < 1000 or unit == "TB":
            break
    return f"{sign}{n:.2f} {unit}" if n < 10 else f"{sign}{n:.1f} {unit}"


def signed(n):
    return ("+" if n >= 0 else "") + human(n)


def duration(seconds):
    seconds = int(seconds)
    h, m, s = seconds // 3600, seconds // 60 % 60, seconds % 60
    return f"{h}h{m:02d}m{s:02d}s" if h else f"{m}m{s:02d}s"


def measure(root, probes=()):
    """(bytes, the folder holding most of them, {probe: bytes}): the disk use
    of the tree at `root` as `du -sx` counts it (allocated blocks, hard links
    once, one file system); the folder is found by going down into the
    largest subfolder while it holds at least half of its parent's bytes."""
    seen = set()
    probed = {}
    try:
        st = os.lstat(root)
    except OSError:
        return 0, root, probed
    if not os.path.isdir(root) or os.path.islink(root):
        return st.st_blocks * 512, root, probed
    dev = st.st_dev

    def walk(path):
        total, best, best_size = 0, None, -1
        try:
            entries = list(os.scandir(path))
        except OSError:  # gone, or not readable
            return 0, path
        for entry in entries:
            try:
                st = entry.stat(follow_symlinks=False)
            except OSError:
                continue
            if st.st_dev != dev:
                continue
            if st.st_nlink > 1 and not entry.is_dir(follow_symlinks=False):
                if (st.st_dev, st.st_ino) in seen:
                    continue
                seen.add((st.st_dev, st.st_ino))
            total += st.st_blocks * 512
            if entry.is_dir(follow_symlinks=False):
                size, where = walk(entry.path)
                total += size
                if size > best_size:
                    best, best_size = where, size
        if path in probes:
            probed[path] = total
        if best is not None and best_size * 2 >= total and best_size > 0:
            return total, best
        return total, path

    total, where = walk(root)
    return total, where, probed


def free_space(path):
    st = os.statvfs(path)
    return st.f_bavail * st.f_frsize


class Series:
    """Before, peak (bytes, time, folder) and after of one measured quantity."""

    def __init__(self, label, lowest=False):
        self.label, self.lowest = label, lowest
        self.before = self.after = None
        self.peak = None  # (bytes, time, folder)

    def add(self, value, when, where=None):
        if self.before is None:
            self.before = value
        if self.peak is None or (value < self.peak[0] if self.lowest else value > self.peak[0]):
            self.peak = (value, when, where)


class Watch:
    def __init__(self, base, run, paths, interval):
        self.base, self.run, self.paths, self.interval = base, run, paths, interval
        self.series = {base: Series(base), run: Series(f"{run} (this run's TMPDIR, in {base})")}
        self.watched = [base]
        if os.path.isdir(SHM) and os.path.realpath(SHM) != os.path.realpath(base):
            self.series[SHM] = Series(f"{SHM} (memory)")
            self.watched.append(SHM)
        for p in paths:
            self.series[p] = Series(p)
            self.watched.append(p)
        self.free = Series(f"free space on the file system of {base}", lowest=True)
        self.samples = 0
        self.stop = threading.Event()
        self.lock = threading.Lock()
        self.thread = threading.Thread(target=self._loop, daemon=True)

    def sample(self):
        when = time.time()
        values = {}
        for path in self.watched:
            size, where, probed = measure(path, probes=(self.run,) if path == self.base else ())
            values[path] = (size, where)
            if path == self.base:
                values[self.run] = (probed.get(self.run, 0), None)
        try:
            free = free_space(self.base)
        except OSError:
            free = None
        with self.lock:
            self.samples += 1
            for path, (size, where) in values.items():
                self.series[path].add(size, when, where)
            if free is not None:
                self.free.add(free, when)
        return values, free

    def _loop(self):
        while not self.stop.is_set():
            start = time.monotonic()
            try:
                self.sample()
            except Exception as e:  # noqa: BLE001 (the watch must not end the run)
                print(f"disk_watch: a sample failed: {e}", file=sys.stderr, flush=True)
            took = time.monotonic() - start
            # (a big tree to walk: at most a tenth of the time goes to measuring, on a machine the tests keep busy)
            self.stop.wait(max(self.interval - took, 9 * took))

    def finish(self):
        self.stop.set()
        self.thread.join()
        self.sample()  # (the end counts too)

    def after(self):
        values, free = {}, None
        for path in self.watched:
            values[path] = measure(path)[0]
        values[self.run] = measure(self.run)[0] if os.path.isdir(self.run) else 0
        try:
            free = free_space(self.base)
        except OSError:
            pass
        for path, size in values.items():
            self.series[path].after = size
        self.free.after = free


def stale_runs(base):
    """This script's folders in `base` whose run has ended (their owner's
    process is gone): a failed run's, kept for a look, or a killed one's."""
    out = []
    try:
        names = os.listdir(base)
    except OSError:
        return out
    for name in names:
        path = os.path.join(base, name)
        if not name.startswith(PREFIX) or not os.path.isdir(path) or os.path.islink(path):
            continue
        try:
            with open(os.path.join(path, "owner")) as fh:
                pid = int(fh.read().split()[0])
        except (OSError, ValueError, IndexError):
            try:
                if time.time() - os.lstat(path).st_mtime < 600:
                    continue  # (being made)
            except OSError:
                continue
            out.append(path)
            continue
        try:
            with open(f"/proc/{pid}/cmdline", "rb") as fh:
                if b"disk_watch" in fh.read():
                    continue  # a run still going
        except OSError:
            pass
        out.append(path)
    return out


def prune(root, limit):
    """Deletes the largest files under `root` until it holds at most `limit`
    bytes. Returns (files, bytes) deleted and the bytes kept."""
    files = []
    for dirpath, _, names in os.walk(root):
        for name in names:
            path = os.path.join(dirpath, name)
            try:
                files.append((os.lstat(path).st_blocks * 512, path))
            except OSError:
                pass
    total = sum(size for size, _ in files)
    count = freed = 0
    for size, path in sorted(files, reverse=True):
        if total <= limit:
            break
        try:
            os.remove(path)
        except OSError:
            continue
        total -= size
        freed += size
        count += 1
    return count, freed, total


def run_command(cmd, env):
    """Runs cmd to its end; returns its exit status. Ctrl-C reaches the
    command through the terminal (this process waits for it to end, then
    reports); a SIGTERM sent to this process is passed on to it."""
    proc = None

    def forward(signum, frame):
        if proc is not None:
            try:
                proc.send_signal(signum)
            except OSError:
                pass

    # (Python-level handlers: the command starts with the default ones)
    old_int = signal.signal(signal.SIGINT, lambda signum, frame: None)
    old_term = signal.signal(signal.SIGTERM, forward)
    try:
        try:
            proc = subprocess.Popen(cmd, env=env, close_fds=False)
        except OSError as e:
            print(f"disk_watch: cannot run {cmd[0]}: {e}", file=sys.stderr, flush=True)
            return 127
        code = proc.wait()
    finally:
        signal.signal(signal.SIGINT, old_int)
        signal.signal(signal.SIGTERM, old_term)
    return 128 - code if code < 0 else code


def report(watch, started, ended, cmd, notes):
    def at(when):
        return f"{time.strftime('%H:%M:%S', time.localtime(when))} (+{duration(when - started)})"

    shown = " ".join(" ".join(cmd).replace("\\\n", " ").split())
    shown = shown if len(shown) <= 160 else shown[:157] + "..."
    out = [f"disk_watch: disk use outside the build tree while `{shown}` ran "
           f"({duration(ended - started)}, {watch.samples} samples, one every {watch.interval:g} s or more):"]
    warnings = []
    for path in watch.watched[:1] + [watch.run] + watch.watched[1:]:
        s = watch.series[path]
        if s.before is None:
            continue
        peak, when, where = s.peak
        line = f"  {s.label}: before {human(s.before)}, peak {human(peak)} ({signed(peak - s.before)}) at {at(when)}"
        if where and where != path:
            line += f" (most of it in {where})"
        if s.after is not None:
            line += f", after {human(s.after)} ({signed(s.after - s.before)})"
        out.append(line)
        if path != SHM and path != watch.run:
            if peak - s.before > PEAK_LIMIT:
                warnings.append(f"{path} grew by {human(peak - s.before)} at the peak: over issue 46's 3 GB")
            if s.after is not None and s.after - s.before > LEFT_LIMIT:
                warnings.append(f"{path} holds {human(s.after - s.before)} more than before the run: "
                                "over issue 46's 500 MB")
    f = watch.free
    if f.before is not None:
        line = f"  {f.label}: before {human(f.before)}, lowest {human(f.peak[0])} at {at(f.peak[1])}"
        if f.after is not None:
            line += f", after {human(f.after)}"
        out.append(line)
    out += [f"  {n}" for n in notes]
    out += [f"disk_watch: WARNING: {w}" for w in warnings]
    print("\n".join(out), flush=True)


def main(argv):
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--interval", type=float, default=2.0, help="seconds between samples (default 2)")
    p.add_argument("--keep-mb", type=float, default=300,
                   help="after a failure, the MB of the run's temporary files kept for a look (default 300)")
    p.add_argument("--path", action="append", default=[], help="another folder to measure (repeatable)")
    p.add_argument("command", nargs=argparse.REMAINDER, help="-- COMMAND [ARG]...")
    a = p.parse_args(argv)
    cmd = a.command[1:] if a.command[:1] == ["--"] else a.command
    if not cmd:
        p.error("no command")
    if os.environ.get("T2O_DISK_WATCH"):
        os.execvp(cmd[0], cmd)  # nested: the outer run watches

    try:
        base = os.path.realpath(tempfile.gettempdir())
        notes = []
        for old in stale_runs(base):
            size = measure(old)[0]
            shutil.rmtree(old, ignore_errors=True)
            notes.append(f"removed {old} ({human(size)}), an earlier run's")
        run = tempfile.mkdtemp(prefix=PREFIX, dir=base)
        with open(os.path.join(run, "owner"), "w") as fh:
            fh.write(f"{os.getpid()}\n")
        tmp = os.path.join(run, "tmp")
        os.mkdir(tmp)
        try:
            shm_before = set(os.listdir(SHM))
        except OSError:
            shm_before = None
        watch = Watch(base, run, [os.path.realpath(x) for x in a.path], a.interval)
        started = time.time()
        watch.sample()
        watch.thread.start()
    except Exception as e:  # noqa: BLE001 (the tests run all the same, unwatched)
        print(f"disk_watch: not watching ({type(e).__name__}: {e})", file=sys.stderr, flush=True)
        return run_command(cmd, dict(os.environ, T2O_DISK_WATCH="unwatched"))
    code = run_command(cmd, dict(os.environ, TMPDIR=tmp, T2O_DISK_WATCH=run))
    ended = time.time()
    try:
        watch.finish()
        if code == 0:
            shutil.rmtree(run, ignore_errors=True)
            notes.append(f"removed {run}: the command passed")
        else:
            count, freed, kept = prune(tmp, a.keep_mb * 1e6)
            if kept:
                notes.append(f"kept {human(kept)} of the failed run's temporary files in {tmp} until the next run"
                             + (f" (deleted the {count} largest, {human(freed)})" if count else ""))
            else:
                shutil.rmtree(run, ignore_errors=True)
                notes.append(f"removed {run}: the command failed, and left nothing to look at")
        if shm_before is not None:
            for name in sorted(set(os.listdir(SHM)) - shm_before):
                if name.startswith("t2o-"):
                    path = os.path.join(SHM, name)
                    size = measure(path)[0]
                    if os.path.isdir(path) and not os.path.islink(path):
                        shutil.rmtree(path, ignore_errors=True)
                    else:
                        os.remove(path)
                    notes.append(f"removed {path} ({human(size)}), which the run left in memory")
        watch.after()
        report(watch, started, ended, cmd, notes)
    except Exception as e:  # noqa: BLE001 (the exit status stays the command's)
        print(f"disk_watch: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    return code


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
