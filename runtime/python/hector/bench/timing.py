"""Timing, peak memory, OOM detection and the DRAM bandwidth probe.

GPU: CUDA events around each run, after a warm-up; the median of the runs.
CPU: time.perf_counter around each run (nothing to synchronize).
"""

import contextlib
import signal
import statistics
import threading
import time

import torch

__all__ = ["is_oom", "time_fn", "time_once", "copy_bandwidth",
           "training_step_floor", "reset_peak", "peak_bytes", "empty_cache",
           "WallLimitExceeded", "wall_limit"]


class WallLimitExceeded(BaseException):
    """Raised inside `wall_limit` when its time is up. A BaseException, as
    KeyboardInterrupt is, so that the `except Exception` of the code it
    interrupts (torch.compile wraps its backends' errors) lets it through."""


@contextlib.contextmanager
def wall_limit(seconds):
    """Interrupts the body with WallLimitExceeded after `seconds` of wall
    time (SIGALRM; the body must return to the interpreter now and then,
    as torch.compile's Python passes and its waits on worker processes
    do). None, or a thread other than the main one, sets no limit."""
    if seconds is None or \
            threading.current_thread() is not threading.main_thread():
        yield
        return

    def expire(signum, frame):
        raise WallLimitExceeded(f"over {seconds:g} s")
    before = signal.signal(signal.SIGALRM, expire)
    signal.setitimer(signal.ITIMER_REAL, seconds)
    try:
        yield
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, before)


def is_oom(exc):
    """True for an out-of-memory error: torch.cuda.OutOfMemoryError, or a
    RuntimeError whose message says 'out of memory' (CUDA) or that the CPU
    allocator could not allocate."""
    oom_type = getattr(torch.cuda, "OutOfMemoryError", None)
    if oom_type is not None and isinstance(exc, oom_type):
        return True
    if isinstance(exc, (RuntimeError, MemoryError)):
        msg = str(exc).lower()
        return ("out of memory" in msg
                or "can't allocate memory" in msg
                or isinstance(exc, MemoryError))
    return False


def _sync(device):
    if device.type == "cuda":
        torch.cuda.synchronize(device)


def time_once(fn, device):
    """Runs fn() once; returns its wall time in seconds (synchronized)."""
    device = torch.device(device)
    _sync(device)
    t0 = time.perf_counter()
    fn()
    _sync(device)
    return time.perf_counter() - t0


def time_fn(fn, device, repeats, warmup):
    """Runs fn() `warmup` times, then `repeats` timed times; returns the
    list of times in milliseconds (one per run)."""
    device = torch.device(device)
    for _ in range(warmup):
        fn()
    _sync(device)
    times = []
    if device.type == "cuda":
        for _ in range(repeats):
            start = torch.cuda.Event(enable_timing=True)
            end = torch.cuda.Event(enable_timing=True)
            start.record()
            fn()
            end.record()
            end.synchronize()
            times.append(start.elapsed_time(end))
    else:
        for _ in range(repeats):
            t0 = time.perf_counter()
            fn()
            _sync(device)
            times.append((time.perf_counter() - t0) * 1e3)
    return times


def copy_bandwidth(device, nbytes=None, repeats=10):
    """Device-to-device copy bandwidth in bytes/s: a large fp32 tensor
    copied into another, counting bytes read + bytes written (2 x size);
    the median of `repeats` copies after a warm-up. Default size: 1 GiB on
    a GPU, 64 MiB on the CPU."""
    device = torch.device(device)
    if nbytes is None:
        nbytes = (1 << 30) if device.type == "cuda" else (64 << 20)
    n = nbytes // 4
    src = torch.rand(n, device=device)
    dst = torch.empty_like(src)
    times = time_fn(lambda: dst.copy_(src), device, repeats, warmup=3)
    ms = statistics.median(times)
    del src, dst
    empty_cache(device)
    return 2.0 * n * 4 / (ms * 1e-3)


def training_step_floor(device, repeats=30):
    """The smallest training step, timed as the harness times a step (ms,
    median of `repeats`): mse_loss of a scaled 64 x 64 leaf, then
    backward. Its kernels take microseconds; the rest is PyTorch's own
    host work (the loss, the autograd engine handing the backward to its
    device thread), which every system's training step pays too. The
    machines of one GPU kind differ in it, and on small graphs a step that
    keeps the GPU idle moves with it, so a run records it."""
    device = torch.device(device)
    leaf = torch.randn(64, 64, device=device, requires_grad=True)
    target = torch.zeros(64, 64, device=device)

    def step():
        leaf.grad = None
        torch.nn.functional.mse_loss(leaf * 2.0, target).backward()
    return statistics.median(time_fn(step, device, repeats, warmup=5))


def reset_peak(device):
    device = torch.device(device)
    if device.type == "cuda":
        torch.cuda.synchronize(device)
        torch.cuda.reset_peak_memory_stats(device)


def peak_bytes(device):
    """torch.cuda.max_memory_allocated since the last reset_peak (None on
    the CPU)."""
    device = torch.device(device)
    if device.type == "cuda":
        return int(torch.cuda.max_memory_allocated(device))
    return None


def empty_cache(device):
    if torch.device(device).type == "cuda":
        torch.cuda.empty_cache()
