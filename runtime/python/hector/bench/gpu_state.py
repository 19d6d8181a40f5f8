"""The GPU's clocks, power and throttle reasons, read through NVML.

Why: a step's time depends on the SM clock, which the GPU lowers when it
reaches its power limit. On an H200, mag's RGCN step ran 1.70 ms at
1980 MHz after an idle second and 1.72 to 1.80 ms at 1770 to 1920 MHz
once the step had run back to back for two seconds and the card drew its
700 W (docs/perf-notes.md section 107). So a case timed right after a
heavy one runs slower than the same case timed first; the harness records
the state beside each case's times so that such differences can be told
apart from the code's.

NVML (libnvidia-ml, installed with the driver) is loaded with ctypes:
pynvml is not a dependency. Without it (no driver, a CPU run) `sample`
returns None.
"""

import ctypes
import os

import torch

__all__ = ["THROTTLE_REASONS", "decode_reasons", "sample", "describe"]

# nvmlClocksEventReasons bits (nvml.h), in bit order.
THROTTLE_REASONS = (
    (0x1, "idle"),
    (0x2, "applications clocks"),
    (0x4, "power cap"),
    (0x8, "hardware slowdown"),
    (0x10, "sync boost"),
    (0x20, "thermal (software)"),
    (0x40, "thermal (hardware)"),
    (0x80, "power brake"),
    (0x100, "display clocks"),
)

_NVML_CLOCK_SM = 1
_NVML_CLOCK_MEM = 2
_NVML_TEMPERATURE_GPU = 0


def decode_reasons(mask):
    """The names of the throttle reasons set in `mask` (unknown bits as
    hex)."""
    names = [name for bit, name in THROTTLE_REASONS if mask & bit]
    rest = mask & ~sum(bit for bit, _ in THROTTLE_REASONS)
    if rest:
        names.append(hex(rest))
    return names


class _Nvml:
    """The few NVML calls `sample` makes, on one device."""

    def __init__(self, lib, handle):
        self._lib, self._handle = lib, handle

    def _read(self, fn, *args, ctype=ctypes.c_uint):
        """fn(handle, *args, &value)'s value, or None when it fails."""
        value = ctype()
        if fn(self._handle, *args, ctypes.byref(value)) != 0:
            return None
        return value.value

    def sm_clock_mhz(self):
        return self._read(self._lib.nvmlDeviceGetClockInfo, _NVML_CLOCK_SM)

    def mem_clock_mhz(self):
        return self._read(self._lib.nvmlDeviceGetClockInfo, _NVML_CLOCK_MEM)

    def power_w(self):
        mw = self._read(self._lib.nvmlDeviceGetPowerUsage)
        return None if mw is None else mw / 1000.0

    def temperature_c(self):
        return self._read(self._lib.nvmlDeviceGetTemperature,
                          _NVML_TEMPERATURE_GPU)

    def throttle_mask(self):
        return self._read(self._lib.nvmlDeviceGetCurrentClocksThrottleReasons,
                          ctype=ctypes.c_ulonglong)


_READERS = {}


def _pci_bus_id(index):
    """The NVML-style PCI bus id of CUDA device `index`, or None when torch
    does not report it."""
    props = torch.cuda.get_device_properties(index)
    try:
        return (f"{props.pci_domain_id:08X}:{props.pci_bus_id:02X}:"
                f"{props.pci_device_id:02X}.0")
    except AttributeError:
        return None


def _open(index):
    """An _Nvml reader of CUDA device `index`, or None without NVML. The
    device is found by its PCI bus id (CUDA and NVML may number devices
    differently); by index only when torch gives no bus id and
    CUDA_VISIBLE_DEVICES does not renumber them."""
    try:
        lib = ctypes.CDLL("libnvidia-ml.so.1")
        if lib.nvmlInit_v2() != 0:
            return None
        handle = ctypes.c_void_p()
        bus = _pci_bus_id(index)
        if bus is not None:
            rc = lib.nvmlDeviceGetHandleByPciBusId_v2(
                bus.encode(), ctypes.byref(handle))
        elif "CUDA_VISIBLE_DEVICES" not in os.environ:
            rc = lib.nvmlDeviceGetHandleByIndex_v2(
                ctypes.c_uint(index), ctypes.byref(handle))
        else:
            return None
        return _Nvml(lib, handle) if rc == 0 else None
    except (OSError, AttributeError):
        return None


def sample(device, reader=None):
    """The GPU state of `device` now: {"sm_clock_mhz", "mem_clock_mhz",
    "power_w", "temperature_c", "throttle": [reason names]} (a field
    NVML could not read is None); None for a CPU device or without NVML.
    `reader` replaces the NVML reader (tests)."""
    device = torch.device(device)
    if reader is None:
        if device.type != "cuda":
            return None
        index = device.index if device.index is not None \
            else torch.cuda.current_device()
        if index not in _READERS:
            _READERS[index] = _open(index)
        reader = _READERS[index]
        if reader is None:
            return None
    mask = reader.throttle_mask()
    return {"sm_clock_mhz": reader.sm_clock_mhz(),
            "mem_clock_mhz": reader.mem_clock_mhz(),
            "power_w": reader.power_w(),
            "temperature_c": reader.temperature_c(),
            "throttle": None if mask is None else decode_reasons(mask)}


def describe(state):
    """A short text of a sample for the run's log: the SM clock, and the
    throttle reasons other than idle when there are any ("" for None)."""
    if not state or state.get("sm_clock_mhz") is None:
        return ""
    busy = [r for r in state.get("throttle") or [] if r != "idle"]
    return f"{state['sm_clock_mhz']} MHz" + (
        f" ({', '.join(busy)})" if busy else "")
