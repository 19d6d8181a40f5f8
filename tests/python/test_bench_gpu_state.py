"""hector.bench.gpu_state: the GPU's clocks and throttle reasons that the
harness records beside each case's times (NVML through ctypes)."""

import ctypes

import pytest
import torch

from hector.bench import gpu_state


def test_decode_reasons_names_each_bit():
    assert gpu_state.decode_reasons(0) == []
    assert gpu_state.decode_reasons(0x1) == ["idle"]
    assert gpu_state.decode_reasons(0x4 | 0x40) == ["power cap",
                                                     "thermal (hardware)"]
    # Bits NVML may add later are kept, as hex.
    assert gpu_state.decode_reasons(0x4 | 0x1000) == ["power cap", "0x1000"]


class FakeReader:
    def __init__(self, mask, sm=1875):
        self.mask, self.sm = mask, sm

    def sm_clock_mhz(self):
        return self.sm

    def mem_clock_mhz(self):
        return 3201

    def power_w(self):
        return 694.5

    def temperature_c(self):
        return 58

    def throttle_mask(self):
        return self.mask


def test_sample_reads_every_field_and_describe_names_the_clock():
    state = gpu_state.sample("cuda:0", reader=FakeReader(0x4))
    assert state == {"sm_clock_mhz": 1875, "mem_clock_mhz": 3201,
                     "power_w": 694.5, "temperature_c": 58,
                     "throttle": ["power cap"]}
    assert gpu_state.describe(state) == "1875 MHz (power cap)"
    # Idle is not a slowdown of the timed steps: not named.
    idle = gpu_state.sample("cuda:0", reader=FakeReader(0x1, sm=1980))
    assert gpu_state.describe(idle) == "1980 MHz"
    unread = gpu_state.sample("cuda:0", reader=FakeReader(None, sm=None))
    assert unread["throttle"] is None
    assert gpu_state.describe(unread) == ""
    assert gpu_state.describe(None) == ""


def test_sample_is_none_on_the_cpu():
    assert gpu_state.sample("cpu") is None
    assert gpu_state.sample(torch.device("cpu")) is None


def test_open_is_none_without_nvml(monkeypatch):
    def missing(name):
        raise OSError(f"{name}: cannot open shared object file")
    monkeypatch.setattr(gpu_state.ctypes, "CDLL", missing)
    assert gpu_state._open(0) is None


class FakeNvmlLib:
    """NVML's C calls as the reader makes them: each writes through its
    last (byref) argument and returns 0, or an error code."""

    def __init__(self, fail=()):
        self.fail = set(fail)
        self.calls = []

    def _out(self, name, args, value):
        self.calls.append((name, args[:-1]))
        if name in self.fail:
            return 999  # NVML_ERROR_UNKNOWN
        args[-1]._obj.value = value
        return 0

    def nvmlDeviceGetClockInfo(self, *args):
        clock = {1: 1890, 2: 3201}[args[1]]
        return self._out("clock", args, clock)

    def nvmlDeviceGetPowerUsage(self, *args):
        return self._out("power", args, 693210)

    def nvmlDeviceGetTemperature(self, *args):
        return self._out("temperature", args, 57)

    def nvmlDeviceGetCurrentClocksThrottleReasons(self, *args):
        return self._out("throttle", args, 0x4)


def test_nvml_reader_converts_units_and_maps_errors_to_none():
    handle = ctypes.c_void_p(1234)
    lib = FakeNvmlLib()
    state = gpu_state.sample("cuda:0", reader=gpu_state._Nvml(lib, handle))
    assert state == {"sm_clock_mhz": 1890, "mem_clock_mhz": 3201,
                     "power_w": pytest.approx(693.21), "temperature_c": 57,
                     "throttle": ["power cap"]}
    # Every call is on the reader's device handle.
    assert all(args[0] is handle for _, args in lib.calls)
    failing = FakeNvmlLib(fail={"power", "throttle"})
    state = gpu_state.sample("cuda:0",
                             reader=gpu_state._Nvml(failing, handle))
    assert state["power_w"] is None and state["throttle"] is None
    assert state["sm_clock_mhz"] == 1890
